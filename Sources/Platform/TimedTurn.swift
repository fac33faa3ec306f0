import Glibc

/// A turn that threads take one at a time, waited for at most a given time: a recursive
/// pthread mutex (a thread may take it again inside what it holds) with a timed wait.
public final class TimedTurn: @unchecked Sendable {
    // Sendable by construction: `depth` is read and written only with the mutex held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// How many times the holder has taken the turn.
    private var depth = 0

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` in the turn, waiting at most `seconds` for it; `body` is told how many of
    /// them are left. Nil (and `body` not run) when the turn did not come in time.
    public func run<Result, E: Error>(waitingAtMost seconds: Double,
                                      _ body: (_ secondsLeft: Double) throws(E) -> Result) throws(E) -> Result? {
        let started = MonotonicClock.seconds()
        if pthread_mutex_trylock(mutex) != 0 {
            var deadline = timespec()
            clock_gettime(CLOCK_REALTIME, &deadline)
            let whole = seconds.rounded(.down)
            deadline.tv_sec += Int(whole)
            deadline.tv_nsec += Int((seconds - whole) * 1_000_000_000)
            if deadline.tv_nsec >= 1_000_000_000 {
                deadline.tv_sec += 1
                deadline.tv_nsec -= 1_000_000_000
            }
            guard pthread_mutex_timedlock(mutex, &deadline) == 0 else { return nil }
        }
        depth += 1
        defer {
            depth -= 1
            pthread_mutex_unlock(mutex)
        }
        return try body(max(0, seconds - (MonotonicClock.seconds() - started)))
    }

    /// Runs `body` in the turn, however long it takes to come: for short work whose holders
    /// all wait a bounded time.
    public func run<Result>(_ body: () -> Result) -> Result {
        pthread_mutex_lock(mutex)
        depth += 1
        defer {
            depth -= 1
            pthread_mutex_unlock(mutex)
        }
        return body()
    }

    /// Runs `body` only when the calling thread holds the turn already; nil otherwise (it
    /// never waits: a turn another thread holds, or a free one, is left as it is).
    public func ifHeldHere<Result>(_ body: () -> Result) -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        depth += 1
        defer {
            depth -= 1
            pthread_mutex_unlock(mutex)
        }
        // Taken just now: free before (depth 1) or held here already (more).
        return depth > 1 ? body() : nil
    }
}
