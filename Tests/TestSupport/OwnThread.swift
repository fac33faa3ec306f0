import Foundation
import Testing

/// Runs a suite, and each test in it, on a thread of its own instead of the shared pool of
/// Swift concurrency, which has one thread per core. A test that waits (on a process, a
/// folder, a deadline) holds its thread while it waits; on the pool it keeps other tests
/// from starting, and a serialized suite of such tests would wait for a free pool thread
/// before each of its tests. Once such a suite has started, it goes on beside the pool.
public struct OwnThread: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? self : nil
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let thread = ThreadExecutor()
        defer { thread.finish() }
        try await withTaskExecutorPreference(thread) { try await function() }
    }
}

extension Trait where Self == OwnThread {
    /// Each test on a thread of its own: see `OwnThread`.
    public static var ownThread: Self { OwnThread() }
}

/// A task executor that is one thread. Jobs run in the order they come; once it is
/// finished and empty the thread ends, and a job that still comes gets a thread of its
/// own rather than being lost.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false
    private var ended = false

    init() {
        let thread = Thread { [self] in run() }
        thread.name = "test"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if ended {
            condition.unlock()
            let executor = asUnownedTaskExecutor()
            Thread { job.runSynchronously(on: executor) }.start()
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            guard !jobs.isEmpty else {
                ended = true
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
