import Queue

/// Reads `BatchFigures` from the queue with a few indexed queries, never every row: the
/// queue may hold 100,000 rows of history and `status` still answers at once.
///
/// The batch is the rows created since the queue was last idle. The agent may say when that
/// was (`agent_state` key `batch_started_at`, milliseconds since the epoch); without it the
/// start is derived from the rows (`derivedStart`). Rows still moving belong to the batch
/// whenever they were created. The rate is the agent's to measure (`rate_bytes_per_s`, bytes
/// per second over its last seconds); it counts only while an agent runs and something moves.
public enum BatchReader {
    static let batchStartKey = QueueStore.batchStartedAtKey
    static let rateKey = QueueStore.rateKey

    /// The figures of the current batch; `agentRunning` decides whether the agent's rate still counts.
    public static func read(_ store: QueueStore, summary: QueueSummary? = nil, agentRunning: Bool) throws -> BatchFigures {
        let summary = try summary ?? store.summary()
        var figures = BatchFigures()
        try readHeld(store, summary: summary, into: &figures)
        let firstID: Int64?
        if let stored = try store.agentValue(batchStartKey), let start = Int64(stored) {
            firstID = try self.firstID(createdAtOrAfter: start, store)
        } else {
            firstID = try derivedStart(store)
        }
        if let firstID {
            // The batch's rows, and rows still moving from before it (a retried old item),
            // summed from the queue's running tally. A completed row has all its bytes done,
            // so plain sums do; failed rows add the bytes they will not move by themselves.
            let batch = try store.sums(idsFrom: firstID) + store.sums(idsFrom: 0, below: firstID, states: TransferState.unfinished)
            figures.filesTotal = batch.files
            figures.filesDone = batch.completed
            figures.bytesTotal = batch.bytesTotal
            // A download of unknown size may have moved more than its total says.
            figures.bytesDone = min(batch.bytesDone, batch.bytesTotal)
            figures.bytesLeft = max(0, figures.bytesTotal - figures.bytesDone - batch.bytesLeftFailed)
            let taken = try store.takenAsItWas(idsFrom: firstID, limit: StatusLine.namedPerKind)
            figures.takenAsItWas = taken.count
            figures.takenAsItWasFirst = taken.first.map { BatchFigures.TakenAsItWas(id: $0.id, path: $0.path, note: $0.note) }
        }
        if agentRunning, figures.uploading + figures.downloading > 0,
           let stored = try store.agentValue(rateKey), let rate = Double(stored), rate.isFinite, rate >= 0 {
            figures.rate = rate
        }
        return figures
    }

    /// What holds the rows that are not done. The counts come from the summary; which
    /// queued rows a gate holds is read only when a gate can hold some and not all of them
    /// (a Wi-Fi-only account, a watch rule, the network gone while a server on this machine
    /// is still reached), since reading every queued row's reason costs a scan.
    static func readHeld(_ store: QueueStore, summary: QueueSummary, into figures: inout BatchFigures) throws {
        figures.uploading = summary.count(.inProgress, .upload)
        figures.downloading = summary.count(.inProgress, .download)
        figures.failed = summary.count(.failed)
        // Rows the person paused one by one wait for the person, whatever else holds the queue.
        figures.paused = min(summary.pausedRows, summary.count(.queued))
        figures.waiting = summary.count(.queued) - figures.paused
        let offline = summary.pausedReason == ReasonCode.offline.rawValue
        if summary.pausedReason == ReasonCode.paused.rawValue {
            // The person paused the whole queue.
            figures.paused += figures.waiting
            figures.waiting = 0
        } else if offline, try !store.accounts().contains(where: \.isOnThisMachine) {
            // The agent holds the whole queue while the network is gone.
            figures.waitingForNetwork = figures.waiting
            figures.waiting = 0
        } else if figures.waiting > 0, try offline || // all but the rows for a server on this machine
                  // Named index: without statistics the planner would read every queued row.
                  !(store.database.query("""
                      SELECT 1 FROM accounts WHERE wifi_only = 1
                      UNION ALL SELECT 1 FROM (SELECT 1 FROM transfers INDEXED BY transfers_by_watch_rule WHERE watch_rule IS NOT NULL AND state = \(TransferState.queued.sql) LIMIT 1) LIMIT 1
                      """) { $0.int(0) }).isEmpty {
            for (reason, count) in try store.reasonCounts(.queued, countingPaused: false) {
                switch reason {
                case .offline: figures.waitingForNetwork += count
                case .wifi: figures.waitingForWiFi += count
                case .battery: figures.waitingForPower += count
                case .paused: figures.paused += count
                default: continue
                }
                figures.waiting -= count
            }
        }
        for (reason, count) in try store.reasonCounts(.retrying) {
            figures.retrying[reason ?? .serverError, default: 0] += count
        }
    }

    /// The ID of the batch's first row: the latest row before which every older row had
    /// already finished, so the queue was idle when it came.
    ///
    /// It starts from the oldest row still moving (or, when nothing moves, the newest row)
    /// and steps back to the oldest row that was still running when the candidate came,
    /// until none was. Rows keep their creation order in their IDs, and finishing times of
    /// completed rows are indexed, so each step is one short index search. A failed row
    /// does not hold the queue busy here: the queue knows when it started, not when it ended.
    static func derivedStart(_ store: QueueStore) throws -> Int64? {
        let oldestMoving = try store.oldestUnfinishedID()
        let newest = try store.database.query("SELECT max(id) FROM transfers") { $0.optionalInt64(0) }.first ?? nil
        guard var candidate = oldestMoving ?? newest else { return nil }
        // Each step goes back at least one row; a batch fed one file at a time for days
        // stops here, a little late, rather than reading its whole history.
        for _ in 0..<100 {
            guard let created = try store.database.query("SELECT created_at FROM transfers WHERE id = ?", [.int(candidate)],
                                                         row: { $0.int64(0) }).first else { return candidate }
            guard let earlier = try completedSince(created, below: candidate, store) else { return candidate }
            candidate = earlier
        }
        return candidate
    }

    /// The oldest completed row older than `id` that finished at or after `time`. Read by ID
    /// when the rows older than `id` are few: an old row still moving, while thousands of
    /// newer ones finished since, would otherwise have each of those read (6 ms at 60,000).
    /// Otherwise through the finishing times, among the rows that finished since `time`,
    /// where a long history before the batch is not read.
    static func completedSince(_ time: Int64, below id: Int64, _ store: QueueStore) throws -> Int64? {
        let older = try store.sums(idsFrom: 0, below: id).files
        if older == 0 { return nil }
        let index = older <= 4096 ? "NOT INDEXED" : "INDEXED BY transfers_completed"
        return try store.database.query("""
            SELECT min(id) FROM transfers \(index)
            WHERE state = \(TransferState.completed.sql) AND completed_at >= ? AND id < ?
            """, [.int(time), .int(id)]) { $0.optionalInt64(0) }.first ?? nil
    }

    /// The first row created at or after `time` (milliseconds), found by bisecting IDs, which
    /// follow creation order; past the last row when none was (only an older row, retried,
    /// moves in this batch).
    static func firstID(createdAtOrAfter time: Int64, _ store: QueueStore) throws -> Int64? {
        func createdAt(fromID id: Int64) throws -> (id: Int64, created: Int64)? {
            try store.database.query("SELECT id, created_at FROM transfers WHERE id >= ? ORDER BY id LIMIT 1", [.int(id)]) {
                ($0.int64(0), $0.int64(1))
            }.first
        }
        guard let last = try store.database.query("SELECT max(id) FROM transfers", row: { $0.optionalInt64(0) }).first ?? nil else {
            return nil
        }
        // The smallest `low` whose first row (at or after it) is new enough, or past the end.
        var low: Int64 = 0
        var high = last + 1
        while low < high {
            let middle = low + (high - low) / 2
            if let row = try createdAt(fromID: middle), row.created < time { low = row.id + 1 } else { high = middle }
        }
        return try createdAt(fromID: low)?.id ?? last + 1
    }
}
