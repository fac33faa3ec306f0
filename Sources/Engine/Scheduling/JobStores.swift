import Platform
import Queue

/// Queue connections for the transfers' threads, kept from one transfer to the next.
///
/// A connection is cheap to use and dear to open: opening reads the schema, and each
/// statement is compiled the first time a connection runs it. A transfer of a small photo
/// runs a dozen statements, so a connection opened per file spent more time compiling
/// them than running them. A connection is used by one thread at a time: a transfer takes
/// one, and gives it back when it ends.
final class JobStores: Sendable {
    private let path: String
    private let kept = Locked<[Kept]>([])
    /// More are never kept than transfers run at once.
    private let limit: Int

    /// A connection no thread uses: it passes from the transfer that gave it back to the
    /// next that takes it, never to two at once.
    private struct Kept: @unchecked Sendable { let store: QueueStore }

    init(path: String, limit: Int) {
        self.path = path
        self.limit = limit
    }

    /// A kept connection, or a new one.
    func take() throws(QueueError) -> QueueStore {
        if let kept = kept.withLock({ $0.popLast() }) { return kept.store }
        return try QueueStore(path: path)
    }

    /// Keeps `store` for the next transfer, unless it was left inside a transaction (it is
    /// closed then, and the next transfer opens its own).
    func giveBack(_ store: QueueStore) {
        guard !store.database.inTransaction else { return }
        let box = Kept(store: store)
        kept.withLock { kept in
            if kept.count < limit { kept.append(box) }
        }
    }
}
