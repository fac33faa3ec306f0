/// Work done one at a time for each key, and side by side for different keys: the threads
/// that start the same work together (listing one folder) wait for the first and then find
/// it done, while work for another key never waits for it.
///
/// Each key's lock counts the runs made under it. A lock around nothing (`Locked<Void>`)
/// has a value of no size, whose guarded writes the thread sanitizer places at the lock
/// object's own address and reports as races with unguarded reads of that object.
public final class OneAtATime<Key: Hashable & Sendable>: Sendable {
    private let locks = Locked<[Key: Locked<Int>]>([:])
    /// Beyond this many keys the locks start over: one still held stays with its holder, and
    /// the work of a key whose lock was let go may at worst run twice at once.
    private let keysKept: Int

    public init(keysKept: Int = 1024) { self.keysKept = keysKept }

    /// Runs `body` while no other `run` for `key` does.
    public func run<Result>(_ key: Key, _ body: () throws -> Result) rethrows -> Result {
        try lock(key).withLock { runs in
            runs += 1
            return try body()
        }
    }

    private func lock(_ key: Key) -> Locked<Int> {
        locks.withLock { locks in
            if let lock = locks[key] { return lock }
            if locks.count >= keysKept { locks.removeAll() }
            let lock = Locked(0)
            locks[key] = lock
            return lock
        }
    }
}
