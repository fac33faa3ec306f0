import Queue

/// Reads `BatchFigures` from the queue with a few aggregate queries, never every row.
///
/// The batch is the rows created since the queue was last idle. The agent may say when that
/// was (`agent_state` key `batch_started_at`, milliseconds since the epoch); without it the
/// moment is derived from the rows: the latest creation time before which every older row had
/// already finished. Rows still moving belong to the batch whenever they were created. The
/// rate is the agent's to measure (`rate_bytes_per_s`, bytes per second over its last
/// seconds); it counts only while an agent runs and something moves.
public enum BatchReader {
    static let batchStartKey = "batch_started_at"
    static let rateKey = "rate_bytes_per_s"

    /// The figures of the current batch; `agentRunning` decides whether the agent's rate still counts.
    public static func read(_ store: QueueStore, agentRunning: Bool) throws -> BatchFigures {
        var figures = BatchFigures()
        try readHeld(store, into: &figures)
        let start = try store.agentValue(batchStartKey).flatMap { Int64($0) } ?? derivedStart(store)
        if let start {
            try store.database.query("""
                SELECT count(*), total(state = 'completed'), total(bytes_total),
                       total(CASE WHEN state = 'completed' THEN bytes_total ELSE min(bytes_done, bytes_total) END),
                       total(CASE WHEN state IN ('queued', 'in_progress', 'retrying') THEN max(bytes_total - bytes_done, 0) ELSE 0 END)
                FROM transfers
                WHERE created_at >= ? OR state IN ('queued', 'in_progress', 'retrying')
                """, [.int(start)]) { r in
                figures.filesTotal = r.int(0)
                figures.filesDone = Int(r.double(1))
                figures.bytesTotal = Int64(r.double(2))
                figures.bytesDone = Int64(r.double(3))
                figures.bytesLeft = Int64(r.double(4))
            }
        }
        if agentRunning, figures.uploading + figures.downloading > 0,
           let stored = try store.agentValue(rateKey), let rate = Double(stored), rate.isFinite, rate >= 0 {
            figures.rate = rate
        }
        return figures
    }

    /// Counts of the rows that are not done, by what holds them.
    static func readHeld(_ store: QueueStore, into figures: inout BatchFigures) throws {
        try store.database.query("""
            SELECT state, direction, reason_code, count(*) FROM transfers
            WHERE state IN ('queued', 'in_progress', 'retrying', 'failed')
            GROUP BY state, direction, reason_code
            """) { r in
            let count = r.int(3)
            let code = r.optionalText(2).flatMap(ReasonCode.init(rawValue:))
            switch TransferState(rawValue: r.text(0)) {
            case .inProgress:
                if r.text(1) == Direction.download.rawValue { figures.downloading += count } else { figures.uploading += count }
            case .queued:
                switch code {
                case .offline: figures.waitingForNetwork += count
                case .wifi: figures.waitingForWiFi += count
                case .paused: figures.paused += count
                default: figures.waiting += count
                }
            case .retrying:
                figures.retrying[code ?? .serverError, default: 0] += count
            case .failed:
                figures.failed += count
            case .completed, nil:
                break
            }
        }
    }

    /// The creation time of the batch's first row: the latest `created_at` before which every
    /// older row had finished (a failed row counts as finished when it started, the latest
    /// moment the queue knows of it). Nil for an empty queue.
    static func derivedStart(_ store: QueueStore) throws -> Int64? {
        try store.database.query("""
            WITH ordered AS (
                SELECT created_at, max(CASE state WHEN 'completed' THEN coalesce(completed_at, created_at)
                                                  WHEN 'failed' THEN coalesce(started_at, created_at)
                                                  ELSE 9223372036854775807 END)
                    OVER (ORDER BY created_at, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS busy_until
                FROM transfers)
            SELECT max(created_at) FROM ordered WHERE busy_until IS NULL OR busy_until < created_at
            """) { $0.optionalInt64(0) }.first ?? nil
    }
}
