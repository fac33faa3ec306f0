import Platform
import Queue

/// The person's pause: of the whole queue (`pause --all`) or of single rows (`pause ID`).
/// Both are in the database; the agent reads them on every pass, stops the running transfers
/// they cover at their last checkpoint (nothing is deleted on the server, a download keeps its
/// `.part`), and starts nothing they hold.
extension Agent {
    func applyPersonsPause(_ store: QueueStore) throws {
        let all = try store.isQueuePaused()
        let rows = all ? [] : try store.pauseRequested()
        let stopped = state.withLock { s -> [Int64] in
            if s.pausedByYou != all { Log.info(all ? "the queue is paused by you" : "the queue is no longer paused") }
            s.pausedByYou = all
            return s.stopAllRunning(because: .pause) { all || rows.contains($0) }
        }
        if !stopped.isEmpty {
            Log.info("paused by you: stopping \(stopped.map { "#\($0)" }.joined(separator: ", ")) at the last checkpoint")
        }
    }

    /// What a row that stopped, or would wait out a backoff, says once it is back in the queue:
    /// the person's pause (its own, or the whole queue's) before anything else; `nil` when
    /// nothing holds it.
    func heldReason(for row: Transfer, cause: StopCause?) -> Reason? {
        if row.paused { return Reason(.paused) }
        if state.withLock({ $0.pausedByYou }) { return .queuePaused }
        return cause == .offline ? Reason(.offline) : nil
    }

    /// True when the person's pause holds this row now.
    func isHeldByPerson(_ row: Transfer) -> Bool {
        row.paused || state.withLock { $0.pausedByYou }
    }
}
