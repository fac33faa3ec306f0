import Platform

/// Counts and sums over the rows without reading them all.
///
/// `transfer_tally` (schema 12) keeps, per 1,024 IDs (a bucket) and per direction, state,
/// reason and pause, how many rows there are and their bytes; triggers keep it in the same
/// transaction that changes a row. Counts for the whole queue read the tally alone (a few
/// rows per bucket); sums over a range of IDs read the whole buckets inside it from the
/// tally and the rows of the one or two buckets it cuts, so they cost the same for a queue
/// of 2,000 rows of history or 200,000.
extension QueueStore {
    static let tallyBucketBits: Int64 = 10

    /// Counts per state and direction, straight from the tally.
    public func summary() throws -> QueueSummary {
        try database.snapshot { try summaryOfOneMoment() }
    }

    private func summaryOfOneMoment() throws -> QueueSummary {
        var summary = QueueSummary()
        try database.query("SELECT direction, state, sum(files) FROM transfer_tally GROUP BY direction, state") { r in
            let direction = Direction(rawValue: r.text(0)) ?? .upload
            let state = TransferState(rawValue: r.text(1)) ?? .failed
            summary.counts[direction, default: [:]][state, default: 0] += r.int(2)
        }
        // The person's pause of the whole queue comes first: it holds whatever else would.
        summary.pausedReason = try isQueuePaused() ? ReasonCode.paused.rawValue : agentValue("paused_reason")
        summary.pausedRows = try pausedCount()
        return summary
    }

    /// How many rows in `state` have each reason (nil: none given), leaving out the rows the
    /// person paused one by one unless `countingPaused`.
    public func reasonCounts(_ state: TransferState, countingPaused: Bool = true) throws -> [ReasonCode?: Int] {
        var counts: [ReasonCode?: Int] = [:]
        try database.query("SELECT reason_code, sum(files) FROM transfer_tally WHERE state = ?"
                           + (countingPaused ? "" : " AND paused = 0") + " GROUP BY reason_code", [.text(state.rawValue)]) { r in
            let count = r.int(1)
            guard count > 0 else { return }
            let code = r.text(0)
            counts[code.isEmpty ? nil : ReasonCode(rawValue: code) ?? .protocol, default: 0] += count
        }
        return counts
    }

    /// The oldest row not finished yet: the tally names its bucket, and only that bucket's
    /// rows are read.
    public func oldestUnfinishedID() throws -> Int64? {
        guard let bucket = try database.query("""
            SELECT min(bucket) FROM transfer_tally WHERE state IN \(TransferState.unfinishedSQL) AND files > 0
            """, row: { $0.optionalInt64(0) }).first ?? nil else { return nil }
        // The bucket's own 1,024 IDs, in order: the first unfinished one ends the search.
        return try database.query("SELECT min(id) FROM transfers NOT INDEXED WHERE id >= ? AND id < ? AND state IN \(TransferState.unfinishedSQL)",
                                  [.int(bucket << Self.tallyBucketBits), .int((bucket + 1) << Self.tallyBucketBits)]) {
            $0.optionalInt64(0)
        }.first ?? nil
    }

    /// What `sums` adds up.
    public struct RowSums: Sendable, Equatable {
        public var files = 0
        public var completed = 0
        public var bytesTotal: Int64 = 0
        public var bytesDone: Int64 = 0
        /// Bytes failed rows did not move (and will not by themselves).
        public var bytesLeftFailed: Int64 = 0

        public init(files: Int = 0, completed: Int = 0, bytesTotal: Int64 = 0, bytesDone: Int64 = 0, bytesLeftFailed: Int64 = 0) {
            self.files = files
            self.completed = completed
            self.bytesTotal = bytesTotal
            self.bytesDone = bytesDone
            self.bytesLeftFailed = bytesLeftFailed
        }

        public static func + (a: RowSums, b: RowSums) -> RowSums {
            var sum = a
            sum.files += b.files
            sum.completed += b.completed
            sum.bytesTotal = Self.add(sum.bytesTotal, b.bytesTotal)
            sum.bytesDone = Self.add(sum.bytesDone, b.bytesDone)
            sum.bytesLeftFailed = Self.add(sum.bytesLeftFailed, b.bytesLeftFailed)
            return sum
        }

        private static func add(_ a: Int64, _ b: Int64) -> Int64 {
            let (sum, overflow) = a.addingReportingOverflow(b)
            return overflow ? Int64.max : sum
        }
    }

    /// Sums over the rows whose IDs are at least `low` and below `high` (nil: no end), in
    /// `states` (nil: any).
    /// The rows from `low` on whose file was taken as it was (`Transfer.takenNote`): how many,
    /// and the first `limit` of them (number, file, note), read from their own index.
    public func takenAsItWas(idsFrom low: Int64, limit: Int) throws -> (count: Int, first: [(id: Int64, path: LocalPath, note: String)]) {
        let count = try database.query("""
            SELECT count(*) FROM transfers INDEXED BY transfers_taken_note WHERE taken_note IS NOT NULL AND id >= ?
            """, [.int(low)]) { $0.int(0) }.first ?? 0
        guard count > 0 else { return (0, []) }
        let first = try database.query("""
            SELECT id, local_path, taken_note FROM transfers INDEXED BY transfers_taken_note WHERE taken_note IS NOT NULL AND id >= ?
            ORDER BY id LIMIT ?
            """, [.int(low), .int(Int64(limit))]) { r in (id: try r.int64("id"), path: LocalPath(bytes: try r.blob("local_path")), note: try r.text("taken_note")) }
        return (count, first)
    }

    public func sums(idsFrom low: Int64, below high: Int64? = nil, states: [TransferState]? = nil) throws -> RowSums {
        let low = max(low, 0)
        if let high, high <= low { return RowSums() }
        let bits = Self.tallyBucketBits
        // The first bucket wholly inside the range; the rows before it are read one by one
        // (none when the range starts where a bucket does: from 0, say).
        let firstWhole = (low + (1 << bits) - 1) >> bits
        let lowEdge = firstWhole << bits
        let stateCondition = states.map { " AND state IN (" + $0.map(\.sql).joined(separator: ", ") + ")" } ?? ""
        guard let high else {
            return try rowSums(low, lowEdge, stateCondition) + tallySums(firstWhole, nil, stateCondition)
        }
        let highBucket = high >> bits
        if highBucket < firstWhole { return try rowSums(low, high, stateCondition) }
        return try rowSums(low, lowEdge, stateCondition) + tallySums(firstWhole, highBucket, stateCondition)
            + rowSums(highBucket << bits, high, stateCondition)
    }

    /// Rows within one bucket: at most 1,024, read by ID; nothing to read for an empty range.
    private func rowSums(_ low: Int64, _ high: Int64, _ stateCondition: String) throws -> RowSums {
        guard low < high else { return RowSums() }
        return try database.query("""
            SELECT count(*), coalesce(sum(state = \(TransferState.completed.sql)), 0), coalesce(sum(bytes_total), 0), coalesce(sum(bytes_done), 0),
                   coalesce(sum(CASE WHEN state = \(TransferState.failed.sql) THEN max(bytes_total - bytes_done, 0) ELSE 0 END), 0)
            FROM transfers NOT INDEXED WHERE id >= ? AND id < ?\(stateCondition)
            """, [.int(low), .int(high)], row: Self.sums).first ?? RowSums()
    }

    /// Whole buckets from `first` up to (not including) `end` (nil: all after).
    private func tallySums(_ first: Int64, _ end: Int64?, _ stateCondition: String) throws -> RowSums {
        if let end, end <= first { return RowSums() }
        return try database.query("""
            SELECT coalesce(sum(files), 0), coalesce(sum(CASE WHEN state = \(TransferState.completed.sql) THEN files ELSE 0 END), 0),
                   coalesce(sum(bytes_total), 0), coalesce(sum(bytes_done), 0),
                   coalesce(sum(CASE WHEN state = \(TransferState.failed.sql) THEN bytes_left ELSE 0 END), 0)
            FROM transfer_tally WHERE bucket >= ? AND bucket < ?\(stateCondition)
            """, [.int(first), .int(end ?? Int64.max)], row: Self.sums).first ?? RowSums()
    }

    private static func sums(_ r: Row) -> RowSums {
        RowSums(files: r.int(0), completed: r.int(1), bytesTotal: r.int64(2), bytesDone: r.int64(3), bytesLeftFailed: r.int64(4))
    }
}
