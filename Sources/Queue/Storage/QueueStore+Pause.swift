import Platform

/// The person's pause, of one row (`pause ID`) or of the whole queue (`pause --all`). Both
/// are written durably, like everything else a person hands over, and outlive the agent.
///
/// A paused row is `queued` with the reason `paused`, and the scheduler never takes it. A
/// running row is only marked: the agent stops it at its last checkpoint and moves it back to
/// `queued` as for any clean stop, so the transition table stays the only way states change.
extension QueueStore {
    /// `agent_state` key holding when the person paused the whole queue (milliseconds since
    /// the epoch); absent while it is not paused.
    static let queuePausedKey = "queue_paused_at"

    /// What a pause or resume did to one row.
    public enum PauseChange: Sendable, Equatable {
        /// Paused (or resumed) now. A running row is only marked: the agent stops it.
        case changed(Transfer)
        /// Already as asked.
        case unchanged(Transfer)
        /// Completed, failed or being cancelled: it does not move, so there is nothing to pause or resume.
        case notMoving(Transfer)
        /// No such row.
        case missing(Int64)
    }

    /// Holds rows where they are: queued ones wait, retrying ones go back to queued (their
    /// backoff means nothing while paused), running ones are marked for the agent to stop.
    public func pause(_ ids: [Int64]) throws -> [PauseChange] {
        let note = Self.reasonColumns(Reason(.paused))
        return try database.transaction(durable: true) {
            try ids.map { id in
                guard let row = try transfer(id: id) else { return .missing(id) }
                if row.cancelRequested || !row.state.isActive { return .notMoving(row) }
                if row.paused { return .unchanged(row) }
                switch row.state {
                case .retrying:
                    try move(id, to: .queued, set: note + [("paused", .int(1)), ("next_attempt_at", .null)])
                case .queued:
                    try database.run("UPDATE transfers SET paused = 1, held_by = NULL, \(note.map { "\($0.0) = ?" }.joined(separator: ", ")) WHERE id = ? AND state = \(TransferState.queued.sql)",
                                     note.map(\.1) + [.int(id)])
                default:
                    try database.run("UPDATE transfers SET paused = 1 WHERE id = ? AND state = ?", [.int(id), .text(row.state.rawValue)])
                }
                return .changed(row)
            }
        }
    }

    /// Lets paused rows go on: the flag is cleared and a waiting row says what still holds it
    /// (the whole queue's pause, no network), or nothing.
    public func resume(_ ids: [Int64]) throws -> [PauseChange] {
        try database.transaction(durable: true) {
            let note = Self.reasonColumns(try queueWideNote())
            return try ids.map { id in
                guard let row = try transfer(id: id) else { return .missing(id) }
                if row.cancelRequested || !row.state.isActive { return .notMoving(row) }
                if !row.paused { return .unchanged(row) }
                try database.run("UPDATE transfers SET paused = 0 WHERE id = ?", [.int(id)])
                if row.state == .queued {
                    try database.run("UPDATE transfers SET \(note.map { "\($0.0) = ?" }.joined(separator: ", ")) WHERE id = ? AND state = \(TransferState.queued.sql)",
                                     note.map(\.1) + [.int(id)])
                }
                return .changed(row)
            }
        }
    }

    /// What holds every waiting row now: the person's pause of the queue, or the gate the
    /// agent last recorded (no network); nil when nothing does.
    func queueWideNote() throws -> Reason? {
        if try isQueuePaused() { return .queuePaused }
        guard let code = try agentValue("paused_reason").flatMap(ReasonCode.init(rawValue:)) else { return nil }
        return Reason(code)
    }

    /// Pauses the whole queue, new items included, until `resumeQueue()`. Waiting rows say so
    /// at once; running ones are the agent's to stop. False when it was paused already.
    @discardableResult
    public func pauseQueue(now: Int64 = nowMilliseconds()) throws -> Bool {
        try database.transaction(durable: true) {
            guard try !isQueuePaused() else { return false }
            try setAgentValue(Self.queuePausedKey, String(now))
            try pauseAllWaiting(reason: .queuePaused)
            return true
        }
    }

    /// Lifts the whole queue's pause and every row's own: everything goes on. Returns whether
    /// the queue was paused and how many rows were paused on their own.
    @discardableResult
    public func resumeQueue() throws -> (queueWasPaused: Bool, rows: Int) {
        try database.transaction(durable: true) {
            let wasPaused = try isQueuePaused()
            try setAgentValue(Self.queuePausedKey, nil)
            let rows = try database.run("UPDATE transfers SET paused = 0 WHERE paused = 1")
            try clearWaiting(code: .paused)
            return (wasPaused, rows)
        }
    }

    /// True while the person has paused the whole queue.
    public func isQueuePaused() throws -> Bool { try agentValue(Self.queuePausedKey) != nil }

    /// Running rows the person paused, which the agent has yet to stop.
    public func pauseRequested() throws -> Set<Int64> {
        Set(try database.query("SELECT id FROM transfers WHERE state = \(TransferState.inProgress.sql) AND paused = 1") { $0.int64(0) })
    }

    /// Queued rows the person paused one by one (read through the partial index on `paused`).
    public func pausedCount() throws -> Int {
        try database.query("SELECT count(*) FROM transfers WHERE state = \(TransferState.queued.sql) AND paused = 1") { $0.int(0) }.first ?? 0
    }
}
