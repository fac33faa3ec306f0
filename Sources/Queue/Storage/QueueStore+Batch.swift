import Platform

/// What the agent keeps in `agent_state` for `status`'s batch line: where the current batch
/// starts and how fast it moves. Figures for people, never a row's state.
extension QueueStore {
    /// Milliseconds since the epoch: the first row of the current batch was created then (or
    /// an older row started moving again then).
    public static let batchStartedAtKey = "batch_started_at"
    /// Decimal bytes per second over every running transfer, over the last seconds; absent
    /// while nothing runs.
    public static let rateKey = "rate_bytes_per_s"
    /// The agent's own: the last row there was while the queue was idle, so the next batch
    /// starts after it, even when it comes while no agent runs.
    static let idleThroughKey = "idle_through_id"

    /// Keeps where the batch starts and returns whether the queue is idle. While idle, the
    /// last row is noted; once the queue is busy again, the batch starts with the first row
    /// after it (`batch_started_at` its creation time, or `now` when only an older row, a
    /// retried one, moves again). One transaction, so a row queued meanwhile is never missed.
    public func markBatch(now: Int64 = nowMilliseconds()) throws -> Bool {
        try database.transaction {
            let idle = try isIdle()
            let marker = try agentValue(Self.idleThroughKey).flatMap { Int64($0) }
            if idle {
                let last = try database.query("SELECT max(id) FROM transfers") { $0.optionalInt64(0) }.first.flatMap { $0 } ?? 0
                if marker != last { try setAgentValue(Self.idleThroughKey, String(last)) }
            } else if let marker {
                let first = try database.query("SELECT created_at FROM transfers WHERE id > ? ORDER BY id LIMIT 1", [.int(marker)]) {
                    $0.int64(0)
                }.first
                try setAgentValue(Self.batchStartedAtKey, String(first ?? now))
                try setAgentValue(Self.idleThroughKey, nil)
            }
            return idle
        }
    }

    /// Bytes done of every running row, by ID.
    public func runningProgress() throws -> [Int64: Int64] {
        var progress: [Int64: Int64] = [:]
        try database.query("SELECT id, bytes_done FROM transfers WHERE state = \(TransferState.inProgress.sql)") { progress[$0.int64(0)] = $0.int64(1) }
        return progress
    }
}
