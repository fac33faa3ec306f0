import CSystem

/// Detached threads for jobs that come one after another, such as the transfers of a card
/// of photos: a thread whose job ended waits a few seconds for the next one before it ends.
/// A thousand small files then take a few threads, not a thousand, each with its stack to
/// map and give back.
public final class ReusedThreads: @unchecked Sendable {
    // @unchecked: `jobs` and `idle` are read and changed only with `condition` locked.
    private let condition = Condition()
    private var jobs: [Job] = []
    /// Threads waiting for a job, less those already promised one in `jobs`.
    private var idle = 0
    private let idleSeconds: Double

    private struct Job {
        let name: String
        let body: @Sendable () -> Void
    }

    /// A thread waits `idleSeconds` for its next job, then ends.
    public init(idleSeconds: Double = 5) {
        self.idleSeconds = idleSeconds
    }

    /// Runs `body` on a waiting thread, renamed `name`, or on a new thread of that name.
    /// False, as `DedicatedThread.startDetached` says, when no thread waits and the system
    /// has none to give: `body` never runs then.
    public func run(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        if idle > 0 {
            idle -= 1
            jobs.append(Job(name: name, body: body))
            condition.unlock()
            condition.signal()
            return true
        }
        condition.unlock()
        // Handed over rather than captured, so that what the job holds is let go when it
        // ends, not when its thread does.
        let first = Locked<Job?>(Job(name: name, body: body))
        return DedicatedThread.startDetached(name: name) { [self] in
            if let job = first.withLock({ job in defer { job = nil }; return job }) { job.body() }
            serve()
        }
    }

    /// Takes the jobs given to waiting threads, until none came for `idleSeconds`.
    private func serve() {
        condition.lock()
        idle += 1
        var waitedOut = false
        while true {
            if !jobs.isEmpty {
                // Promised to a waiting thread by `run`: `idle` already counts it as taken.
                let job = jobs.removeFirst()
                condition.unlock()
                _ = csystem_name_thread(job.name)
                job.body()
                condition.lock()
                idle += 1
                waitedOut = false
            } else if waitedOut {
                idle -= 1
                break
            } else {
                waitedOut = !condition.wait(seconds: idleSeconds)
            }
        }
        condition.unlock()
    }
}
