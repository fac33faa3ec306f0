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
            // The mutex's timed wait counts on the wall clock.
            var deadline = timespec.deadline(in: seconds, on: CLOCK_REALTIME)
            guard pthread_mutex_timedlock(mutex, &deadline) == 0 else { return nil }
        }
        return try taken { () throws(E) -> Result in try body(max(0, seconds - (MonotonicClock.seconds() - started))) }
    }

    /// Runs `body` in the turn, however long it takes to come: for short work whose holders
    /// all wait a bounded time.
    public func run<Result>(_ body: () -> Result) -> Result {
        pthread_mutex_lock(mutex)
        return taken(body)
    }

    /// Runs `body` only when the calling thread holds the turn already; nil otherwise (it
    /// never waits: a turn another thread holds, or a free one, is left as it is).
    public func ifHeldHere<Result>(_ body: () -> Result) -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        // Taken just now: free before (depth 1) or held here already (more).
        return taken { depth > 1 ? body() : nil }
    }

    /// Runs `body` with the mutex just locked by the caller, counted in `depth`; unlocks after.
    private func taken<Result, E: Error>(_ body: () throws(E) -> Result) throws(E) -> Result {
        depth += 1
        defer {
            depth -= 1
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }
}
