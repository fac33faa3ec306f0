import Dispatch
import Foundation
import Platform
import Testing

@Suite("ReusedThreads: a thread kept for the next job")
struct ReusedThreadsTests {
    /// The kernel's ID of the calling thread and the name tools show for it.
    private static func currentThread() -> (id: String, name: String) {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "?"
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
        return (String(link.split(separator: "/").last ?? "?"), name.trimmingCharacters(in: .newlines))
    }

    @Test("jobs one after another run on one thread, named after each job in turn")
    func oneAfterAnother() throws {
        let threads = ReusedThreads(idleSeconds: 30)
        let seen = Locked<[(id: String, name: String)]>([])
        for index in 1...3 {
            let done = DispatchSemaphore(value: 0)
            #expect(threads.run(name: "job-\(index)") { seen.withLock { $0.append(Self.currentThread()) }; done.signal() })
            #expect(done.wait(timeout: .now() + 10) == .success)
            // The thread goes back to waiting just after its job returns.
            Thread.sleep(forTimeInterval: 0.05)
        }
        let runs = seen.withLock { $0 }
        #expect(Set(runs.map(\.id)).count == 1, "one thread: \(runs)")
        #expect(runs.map(\.name) == ["job-1", "job-2", "job-3"])
    }

    @Test("jobs at the same time each get a thread of their own")
    func atTheSameTime() {
        let threads = ReusedThreads(idleSeconds: 30)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        for index in 1...4 {
            #expect(threads.run(name: "busy-\(index)") { started.signal(); release.wait() })
        }
        var running = 0
        for _ in 1...4 where started.wait(timeout: .now() + 10) == .success { running += 1 }
        #expect(running == 4, "every job runs while the others still do")
        for _ in 1...4 { release.signal() }
    }

    @Test("what a job holds is let go when the job ends, while its thread waits for the next")
    func jobLetGo() {
        final class Held: Sendable {}
        let threads = ReusedThreads(idleSeconds: 30)
        for round in 1...2 {
            weak var watched: Held?
            let done = DispatchSemaphore(value: 0)
            do {
                let held = Held()
                watched = held
                #expect(threads.run(name: "hold-\(round)") { withExtendedLifetime(held) {}; done.signal() })
            }
            #expect(done.wait(timeout: .now() + 10) == .success)
            let deadline = Date().addingTimeInterval(10)
            while watched != nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            #expect(watched == nil, "round \(round): released")
        }
    }

    @Test("a thread that waited its idle time for a job ends")
    func endsWhenIdle() throws {
        let threads = ReusedThreads(idleSeconds: 0.2)
        let id = Locked("")
        let done = DispatchSemaphore(value: 0)
        #expect(threads.run(name: "short") { id.withLock { $0 = Self.currentThread().id }; done.signal() })
        #expect(done.wait(timeout: .now() + 10) == .success)
        let task = "/proc/self/task/\(id.withLock { $0 })"
        let deadline = Date().addingTimeInterval(10)
        while FileManager.default.fileExists(atPath: task), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(!FileManager.default.fileExists(atPath: task), "the thread ended")
        // The next job gets a new thread.
        let again = DispatchSemaphore(value: 0)
        #expect(threads.run(name: "later") { again.signal() })
        #expect(again.wait(timeout: .now() + 10) == .success)
    }
}
