import Glibc

/// A value that several threads share, guarded by a pthread mutex: the project's one lock.
///
/// Not `Synchronization.Mutex`: on Linux its futex lives inside the standard library, which
/// the thread sanitizer does not see into, so `make sanitize` reported every value a `Mutex`
/// guards as a race, and a real race would have been lost among them. A pthread mutex is what
/// the sanitizer knows; the cost is one allocation per lock, made once.
///
/// It guards a value, never nothing: work done one at a time is `OneAtATime` (a
/// `Locked<Void>` is reported as racing by the thread sanitizer; `OneAtATime` says why).
public final class Locked<Value: ~Copyable>: @unchecked Sendable {
    // Sendable by construction: `value` is only reached through `withLock`, under `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: consuming Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, alone: no other thread is inside `withLock` meanwhile.
    public func withLock<Result: ~Copyable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
