import Glibc

/// A pthread mutex with a condition variable: for a producer and a consumer that sleep until
/// the other has changed what they share (`PipelinedHasher`'s buffers, `ReusedThreads`' jobs).
///
/// The caller keeps the shared state itself and touches it only between `lock()` and
/// `unlock()`; `wait()` is called with the lock held, and holds it again when it returns.
/// Prefer `Locked` wherever nobody needs to sleep until something changes.
public final class Condition: @unchecked Sendable {
    // Sendable by construction: the mutex and the condition variable are made for sharing
    // between threads, and are only reached through the pthread calls below.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        // Timed waits count on the monotonic clock: setting the date does not shorten them.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Releases the lock, sleeps until a `broadcast()` (or a spurious wake-up: check the
    /// state again), and takes the lock back.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// As `wait()`, for `seconds` at most; false when they passed without a wake-up.
    public func wait(seconds: Double) -> Bool {
        var deadline = timespec.deadline(in: seconds, on: CLOCK_MONOTONIC)
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }

    /// Wakes one thread sleeping in `wait()`.
    public func signal() { pthread_cond_signal(condition) }

    /// Wakes every thread sleeping in `wait()`.
    public func broadcast() { pthread_cond_broadcast(condition) }
}

extension timespec {
    /// This time in whole milliseconds (since the epoch, for a realtime clock or a file's times).
    public var milliseconds: Int64 { Int64(tv_sec) * 1000 + Int64(tv_nsec) / 1_000_000 }

    /// This time in nanoseconds, as a file's times are kept.
    public var nanoseconds: Int64 { Int64(tv_sec) * 1_000_000_000 + Int64(tv_nsec) }

    /// `seconds` from now (none when negative) on `clock`, for the pthread calls that wait
    /// until a deadline.
    static func deadline(in seconds: Double, on clock: clockid_t) -> timespec {
        var deadline = timespec()
        clock_gettime(clock, &deadline)
        let whole = max(0, seconds).rounded(.down)
        let nanoseconds = Int(deadline.tv_nsec) + Int((max(0, seconds) - whole) * 1e9)
        deadline.tv_sec += Int(whole) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return deadline
    }
}
