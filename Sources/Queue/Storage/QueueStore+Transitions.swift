import Platform

/// State changes. Each goes through `TransferState.moving(to:)`, and the UPDATE names the
/// state it expects, so a row changed meanwhile by another process is never clobbered.
extension QueueStore {
    /// Moves row `id` from its current state to `next`, setting `columns` as well.
    /// Returns the row as it was, or nil when it no longer exists (or is no longer in the
    /// state it was read in).
    @discardableResult
    func move(_ id: Int64, to next: TransferState, allowedFrom: Set<TransferState>? = nil,
              set columns: [(String, SQLValue)] = []) throws -> Transfer? {
        try database.transaction {
            guard let row = try transfer(id: id) else { return nil }
            return try move(row, to: next, allowedFrom: allowedFrom, set: columns)
        }
    }

    /// The same for a row just read in the caller's transaction; nil when the row is no
    /// longer in the state it was read in (nothing is changed then).
    private func move(_ row: Transfer, to next: TransferState, allowedFrom: Set<TransferState>? = nil,
                      set columns: [(String, SQLValue)] = []) throws -> Transfer? {
        if let allowedFrom, !allowedFrom.contains(row.state) { throw IllegalTransition(from: row.state, to: next) }
        _ = try row.state.moving(to: next)
        var assignments = ["state = ?"]
        var args: [SQLValue] = [.text(next.rawValue)]
        for (column, value) in Self.comingBack(to: next, columns) { assignments.append("\(column) = ?"); args.append(value) }
        args += [.int(row.id), .text(row.state.rawValue)]
        let changed = try database.run("UPDATE transfers SET \(assignments.joined(separator: ", ")) WHERE id = ? AND state = ?", args)
        return changed > 0 ? row : nil
    }

    /// Moves every row in one of `sources` (and matching `condition`) to `next` in one
    /// UPDATE; each source state is checked against the table first. `expressions` are
    /// assignments computed from the row itself (`bytes_done = checkpoint_offset`).
    @discardableResult
    func moveAll(from sources: Set<TransferState>, to next: TransferState, set columns: [(String, SQLValue)] = [],
                 expressions: [String] = [], where condition: String = "1", _ conditionArguments: [SQLValue] = []) throws -> Int {
        for source in sources.sorted(by: { $0.rawValue < $1.rawValue }) { _ = try source.moving(to: next) }
        guard !sources.isEmpty else { return 0 }
        var assignments = ["state = ?"] + expressions
        var args: [SQLValue] = [.text(next.rawValue)]
        for (column, value) in Self.comingBack(to: next, columns) { assignments.append("\(column) = ?"); args.append(value) }
        let states = Array(repeating: "?", count: sources.count).joined(separator: ", ")
        args += sources.map { .text($0.rawValue) } + conditionArguments
        return try database.run("UPDATE transfers SET \(assignments.joined(separator: ", ")) WHERE state IN (\(states)) AND (\(condition))", args)
    }

    /// A row coming back to `queued` is held by no gate until the scheduler meets it again
    /// (`QueueStore+Hold.swift`), unless the move is a hold's own.
    private static func comingBack(to next: TransferState, _ columns: [(String, SQLValue)]) -> [(String, SQLValue)] {
        next == .queued && !columns.contains(where: { $0.0 == "held_by" }) ? columns + [("held_by", .null)] : columns
    }

    static func reasonColumns(_ reason: Reason?) -> [(String, SQLValue)] {
        [("reason_code", .optionalText(reason?.code.rawValue)), ("reason_message", .optionalText(reason?.message)),
         ("reason_action", .optionalText(reason?.action)), ("reason_detail", .optionalText(reason?.detail))]
    }

    // MARK: The agent

    /// The agent takes a row: `queued`/`retrying` -> `in_progress`. Nil when the row is gone,
    /// or the person paused it since the agent picked it.
    @discardableResult
    public func start(_ id: Int64, resumedAt: Int64) throws -> Transfer? {
        try database.transaction {
            guard let row = try transfer(id: id) else { return nil }
            return try start(row, resumedAt: resumedAt)
        }
    }

    /// The same for `row` as the caller read it in the transaction it is still in (the
    /// scheduler's pass), so it is not read again.
    @discardableResult
    public func start(_ row: Transfer, resumedAt: Int64) throws -> Transfer? {
        guard !row.paused else { return nil }
        return try move(row, to: .inProgress, set: Self.reasonColumns(nil) + [
            ("started_at", .int(nowMilliseconds())), ("next_attempt_at", .null),
            ("resumed_at", .int(resumedAt)), ("bytes_read", .int(0)), ("bytes_hashed", .int(0)),
        ])
    }

    /// A chunk the server confirmed: offset and hash state in one row update.
    public func checkpoint(_ id: Int64, offset: Int64, hashState: [UInt8]?, counters: ResumeCounters, resetAttempts: Bool) throws {
        try database.run("""
            UPDATE transfers SET checkpoint_offset = ?, hash_state = ?, bytes_done = ?, resumed_at = ?, bytes_read = ?, bytes_hashed = ?,
                attempts = CASE WHEN ? THEN 0 ELSE attempts END
            WHERE id = ? AND state = \(TransferState.inProgress.sql)
            """, [.int(offset), .optionalBlob(hashState), .int(offset), .int(counters.resumedAt), .int(counters.bytesRead), .int(counters.bytesHashed),
                  .int(resetAttempts ? 1 : 0), .int(id)])
    }

    /// Progress for people to see; not a resume point.
    public func progress(_ id: Int64, bytesDone: Int64) throws {
        try database.run("UPDATE transfers SET bytes_done = ? WHERE id = ? AND state = \(TransferState.inProgress.sql)", [.int(bytesDone), .int(id)])
    }

    /// The progress of several rows, in one commit.
    public func progress(_ positions: [(id: Int64, bytesDone: Int64)]) throws {
        try database.transaction {
            for position in positions { try progress(position.id, bytesDone: position.bytesDone) }
        }
    }

    /// The server's upload resource for this row, or nil to forget it (a new upload starts).
    public func setUpload(_ id: Int64, url: String?, expiresAt: Int64?) throws {
        try database.run("UPDATE transfers SET upload_url = ?, upload_expires_at = ? WHERE id = ?",
                         [.optionalText(url), .optionalInt(expiresAt), .int(id)])
    }

    /// A new upload on the server: its handle, and nothing of it confirmed yet (this attempt
    /// resumes at zero), in one row update.
    public func startedUpload(_ id: Int64, url: String, expiresAt: Int64?) throws {
        try database.run("""
            UPDATE transfers SET upload_url = ?, upload_expires_at = ?, checkpoint_offset = 0, hash_state = NULL, bytes_done = 0,
                resumed_at = 0 WHERE id = ? AND state = \(TransferState.inProgress.sql)
            """, [.text(url), .optionalInt(expiresAt), .int(id)])
    }

    /// Forgets progress: the next attempt starts from byte zero, saying why.
    public func restartFromZero(_ id: Int64, note: Reason?, fingerprint: FileFingerprint? = nil, bytesTotal: Int64? = nil) throws {
        var sql = "UPDATE transfers SET checkpoint_offset = 0, hash_state = NULL, bytes_done = 0, upload_url = NULL, upload_expires_at = NULL, etag = NULL, finishing = 0"
        var args: [SQLValue] = []
        for (column, value) in Self.reasonColumns(note) { sql += ", \(column) = ?"; args.append(value) }
        if let fingerprint {
            // Another version of the file: what the watch rule said of the one it took is not
            // about this one (the same version sent again keeps it). SET reads the row as it was.
            sql += ", taken_note = CASE WHEN \(FileFingerprint.matching()) THEN taken_note END, "
                + FileFingerprint.transferAssignments
            args += fingerprint.columnValues + fingerprint.columnValues
        }
        if let bytesTotal { sql += ", bytes_total = ?"; args.append(.int(bytesTotal)) }
        try database.run(sql + " WHERE id = ?", args + [.int(id)])
    }

    /// Where the file really ended up on the server.
    public func setRemotePath(_ id: Int64, _ path: String) throws {
        try database.run("UPDATE transfers SET remote_path = ? WHERE id = ?", [.text(path), .int(id)])
    }

    public func setDownloadInfo(_ id: Int64, localPath: LocalPath? = nil, bytesTotal: Int64? = nil, etag: String?? = nil) throws {
        var parts: [String] = []
        var args: [SQLValue] = []
        if let localPath { parts.append("local_path = ?"); args.append(.blob(localPath.bytes)) }
        if let bytesTotal { parts.append("bytes_total = ?"); args.append(.int(bytesTotal)) }
        if let etag { parts.append("etag = ?"); args.append(.optionalText(etag)) }
        guard !parts.isEmpty else { return }
        try database.run("UPDATE transfers SET \(parts.joined(separator: ", ")) WHERE id = ?", args + [.int(id)])
    }

    /// An upload is about to make its file: the name, size and SHA-256 (when known before
    /// the request) it will have, committed before the request that makes it, durably
    /// unless `durable` is false: the caller knows that a power cut taking the record back
    /// leaves nothing to repeat (a new file whose SHA-256 the server keeps and reports is
    /// recognised at its name by the next attempt's look at the target).
    ///
    /// `claimingFor`: the name is also claimed here, in the same commit, as `claimRemotePath`
    /// claims it (older rows and started ones keep theirs); false, and nothing recorded,
    /// when another row of that account claims it.
    @discardableResult
    public func recordFinishing(_ id: Int64, remotePath: String, bytes: Int64, sha256: String?, durable: Bool = true,
                                claimingFor accountID: Int64? = nil) throws -> Bool {
        try database.transaction(durable: durable) {
            if let accountID, try isRemotePathClaimed(remotePath, accountID: accountID, byOtherThan: id, claimants: .olderOrStarted) {
                return false
            }
            _ = try database.run("""
                UPDATE transfers SET finishing = 1, bytes_total = ?, sha256 = ? WHERE id = ? AND state = \(TransferState.inProgress.sql)
                """, [.int(bytes), .optionalText(sha256), .int(id)])
            // Apart, so that a name kept (most of them) leaves the index on names alone.
            _ = try database.run("""
                UPDATE transfers SET remote_path = ? WHERE id = ? AND state = \(TransferState.inProgress.sql) AND remote_path IS NOT ?
                """, [.text(remotePath), .int(id), .text(remotePath)])
            return true
        }
    }

    /// Done: the whole-file digest and the time are stored with the row; `verified` says the
    /// server showed the finished file (see `Transfer.verifiedAt`); `counters`, when given,
    /// are what the transfer read and hashed since its last checkpoint said.
    ///
    /// Flushed to the disk, so that a completed row a power cut took back is not sent again,
    /// unless the row was an upload that recorded the file it made before making it
    /// (`recordFinishing`): its next attempt recognises that file on the server instead of
    /// sending it again. A verified row is flushed all the same: its original may go to the
    /// trash next, and must not go while the row could still say anything else.
    ///
    /// The row as completed, read in the same transaction.
    @discardableResult
    public func complete(_ id: Int64, sha256: String?, bytes: Int64, verified: Bool = false, counters: ResumeCounters? = nil) throws -> Transfer? {
        try complete(id, as: nil, sha256: sha256, bytes: bytes, verified: verified, counters: counters)
    }

    /// The same for `row` as the caller read it in the transaction it is still in (the
    /// scheduler's pass), so it is not read again.
    @discardableResult
    public func complete(_ row: Transfer, sha256: String?, bytes: Int64, verified: Bool = false, counters: ResumeCounters? = nil) throws -> Transfer? {
        try complete(row.id, as: row, sha256: sha256, bytes: bytes, verified: verified, counters: counters)
    }

    private func complete(_ id: Int64, as read: Transfer?, sha256: String?, bytes: Int64, verified: Bool,
                          counters: ResumeCounters?) throws -> Transfer? {
        let (row, completed) = try database.transaction {
            let now = nowMilliseconds()
            let counted: [(String, SQLValue)] = counters.map {
                [("resumed_at", .int($0.resumedAt)), ("bytes_read", .int($0.bytesRead)), ("bytes_hashed", .int($0.bytesHashed))]
            } ?? []
            let row = try (read ?? transfer(id: id)).flatMap { row in
                try move(row, to: .completed, set: Self.reasonColumns(nil) + counted + [
                    ("sha256", .optionalText(sha256)), ("completed_at", .int(now)),
                    ("bytes_done", .int(bytes)), ("bytes_total", .int(bytes)), ("next_attempt_at", .null),
                    ("hash_state", .null), ("upload_url", .null), ("upload_expires_at", .null),
                    ("finishing", .int(0)), ("verified_at", verified ? .int(now) : .null),
                ])
            }
            // A watch rule's memory learns the content it took, for later copies of it.
            try noteUploadCompleted(id, sha256: sha256)
            if let row { try noteLocalDrive(completed: row, sha256: sha256) }
            // Nil when nothing was completed: the row gone, or no longer in the state it was read in.
            return (row, try row.flatMap { _ in try transfer(id: id) })
        }
        let madeFileRecorded = row?.direction == .upload && row?.finishing == true
        if verified || !madeFileRecorded { try database.flushLog() }
        return completed
    }

    /// A transient failure: wait, then try again. `countAttempt` is false for clean stops.
    public func retryLater(_ id: Int64, reason: Reason, at time: Int64, attempts: Int) throws {
        try move(id, to: .retrying, set: Self.reasonColumns(reason) + [("next_attempt_at", .int(time)), ("attempts", .int(attempts))])
    }

    /// A permanent failure, with its specific reason.
    public func fail(_ id: Int64, reason: Reason) throws {
        try move(id, to: .failed, set: Self.reasonColumns(reason) + [("next_attempt_at", .null)])
    }

    /// A clean stop of a running or waiting row, back to `queued`, keeping its checkpoint.
    public func requeue(_ id: Int64, reason: Reason?) throws {
        try move(id, to: .queued, allowedFrom: [.inProgress, .retrying], set: Self.reasonColumns(reason) + [("next_attempt_at", .null)])
    }

    /// On start, the agent takes back rows it left `in_progress` when it died; they resume
    /// from their checkpoints, except those the person paused meanwhile, which say so and wait.
    @discardableResult
    public func recoverAbandoned() throws -> Int {
        try database.transaction {
            let rewind = ["bytes_done = checkpoint_offset"]
            let paused = try moveAll(from: [.inProgress], to: .queued, set: Self.reasonColumns(Reason(.paused)), expressions: rewind,
                                     where: "paused = 1")
            return try paused + moveAll(from: [.inProgress], to: .queued, expressions: rewind)
        }
    }

    /// A gate for the whole queue (network gone, paused by the person): every waiting row says
    /// so, except those paused on their own, and retrying rows go back to queued (their
    /// backoff means nothing while it is shut). Rows of the `sparing` accounts, which the
    /// gate does not hold (a server on this machine while the network is down), are left alone.
    public func pauseAllWaiting(reason: Reason, sparing accounts: Set<Int64> = []) throws {
        let cols = Self.reasonColumns(reason)
        let spared = accounts.sorted().map(String.init).joined(separator: ", ")
        let condition = accounts.isEmpty ? "1" : "account_id NOT IN (\(spared))"
        try database.transaction {
            try moveAll(from: [.retrying], to: .queued, set: cols + [("next_attempt_at", .null)], where: condition)
            try database.run("UPDATE transfers SET \(cols.map { "\($0.0) = ?" }.joined(separator: ", ")) WHERE state = \(TransferState.queued.sql) AND paused = 0 AND \(condition)",
                             cols.map(\.1))
        }
    }

    /// Clears a waiting note (e.g. `offline`) from queued rows (of one account, when given);
    /// rows the person paused keep theirs.
    public func clearWaiting(code: ReasonCode, accountID: Int64? = nil) throws {
        try database.run("""
            UPDATE transfers SET reason_code = NULL, reason_message = NULL, reason_action = NULL, reason_detail = NULL
            WHERE state = \(TransferState.queued.sql) AND paused = 0 AND reason_code = ?\(accountID == nil ? "" : " AND account_id = ?")
            """, [.text(code.rawValue)] + (accountID.map { [.int($0)] } ?? []))
    }

    /// Rows the scheduler may start now: queued ones the person has not paused and no gate
    /// holds (`hold`), and retrying ones whose time has come, hand-made work first, then
    /// oldest first. Rows of `excludingAccounts` (held within a pass, by a busy server or a
    /// password still being read) are left out as well.
    public func runnable(direction: Direction, now: Int64, limit: Int, excluding: Set<Int64> = [],
                         excludingAccounts: Set<Int64> = []) throws -> [Transfer] {
        var condition = "t.direction = ? AND t.cancel_requested = 0 AND t.paused = 0"
        var args: [SQLValue] = [.text(direction.rawValue)]
        for (column, ids) in [("t.id", excluding), ("t.account_id", excludingAccounts)] where !ids.isEmpty {
            condition += " AND \(column) NOT IN (\(Array(repeating: "?", count: ids.count).joined(separator: ", ")))"
            args += ids.sorted().map { .int($0) }
        }
        // Queued rows ready to start, read in order from their own index (rows a gate holds,
        // or the person paused, are not in it), and the due retrying rows, found by their
        // time in theirs and sorted (a few, where the rest of the retrying rows may be
        // thousands); the two are merged: an OR of the two states would have SQLite sort
        // every waiting row at each dispatch, which a backlog of 50,000 photos pays per file.
        // The indexes are named: SQLite would take the one with more equal columns.
        func select(_ index: String) -> String {
            "SELECT \(Self.columns), t.lane AS lane FROM transfers t INDEXED BY \(index) JOIN accounts a ON a.id = t.account_id WHERE \(condition)"
        }
        let sql = """
            SELECT * FROM (\(select("transfers_ready")) AND t.state = \(TransferState.queued.sql) AND t.held_by IS NULL
                           UNION ALL \(select("transfers_retrying")) AND t.state = \(TransferState.retrying.sql) AND t.next_attempt_at <= ?)
            ORDER BY lane, id LIMIT ?
            """
        return try database.query(sql, args + args + [.int(now), .int(limit)], row: Self.transfer)
    }

    /// When the next retrying row becomes due after `now`, so the agent can sleep until
    /// then: one probe of the retrying rows' index. Rows due already are left out: the pass
    /// that just ended met them, and those it did not start wait for something that wakes
    /// the agent by itself (a slot freed by a transfer that ends, a busy server's wait
    /// ending, a password read); counting them here would wake it every few milliseconds
    /// until then.
    public func nextRetryTime(after now: Int64) throws -> Int64? {
        try database.query("SELECT min(next_attempt_at) FROM transfers INDEXED BY transfers_retrying WHERE state = \(TransferState.retrying.sql) AND next_attempt_at > ?",
                           [.int(now)]) { $0.optionalInt64(0) }.first ?? nil
    }

    /// True when no row is queued, running or retrying. With `countingPaused: false`, rows
    /// the person paused do not count (they wait for the person, not for the agent); with
    /// `countingAuto: false`, instant uploads do not (their lane is left out, so the index
    /// answers at once however long their backlog).
    public func isIdle(countingPaused: Bool = true, countingAuto: Bool = true) throws -> Bool {
        try database.query("SELECT 1 FROM transfers WHERE state IN \(TransferState.unfinishedSQL)"
                           + (countingPaused ? "" : " AND paused = 0")
                           // Both directions named, so the index on (state, direction, lane) finds the lane.
                           + (countingAuto ? "" : " AND direction IN ('upload', 'download') AND lane = \(Origin.manual.lane)")
                           + " LIMIT 1") { $0.int(0) }.isEmpty
    }

    public func cancelRequested() throws -> [Transfer] {
        try database.query("SELECT \(Self.columns) FROM transfers t JOIN accounts a ON a.id = t.account_id WHERE t.cancel_requested = 1",
                           row: Self.transfer)
    }

    // MARK: The person

    /// `failed` -> `queued` (or a waiting `retrying` row -> `queued` to go now), no longer
    /// paused: retrying is asking it to go. Returns the ids that moved; completed and
    /// running rows are left as they are.
    @discardableResult
    public func retry(_ ids: [Int64], newRemoteFolder: String? = nil, ignoreRules: Bool = false) throws -> [Int64] {
        try database.transaction(durable: true) {
            var moved: [Int64] = []
            let note: Reason? = try isQueuePaused() ? .queuePaused : nil
            for id in ids {
                guard let row = try transfer(id: id), row.state == .failed || row.state == .retrying else { continue }
                var cols = Self.reasonColumns(note) + [("attempts", SQLValue.int(0)), ("restarts", .int(0)), ("next_attempt_at", .null),
                                                      ("paused", .int(0))]
                if ignoreRules { cols.append(("ignore_rules", .int(1))) }
                if let folder = newRemoteFolder {
                    let name = row.remotePath.split(separator: "/").last.map(String.init) ?? row.remotePath
                    cols.append(("remote_path", .text(RemotePath.join(folder, name))))
                    // A new place is a new upload.
                    cols += [("upload_url", .null), ("checkpoint_offset", .int(0)), ("hash_state", .null), ("bytes_done", .int(0))]
                }
                _ = try move(id, to: .queued, set: cols)
                moved.append(id)
            }
            return moved
        }
    }

    /// The person said "now": these rows go regardless of Wi-Fi rules.
    public func setIgnoreRules(_ ids: [Int64]) throws {
        try database.transaction(durable: true) {
            for id in ids { try database.run("UPDATE transfers SET ignore_rules = 1, held_by = NULL WHERE id = ?", [.int(id)]) }
        }
    }

    public func failedIDs() throws -> [Int64] {
        try database.query("SELECT id FROM transfers WHERE state = \(TransferState.failed.sql) ORDER BY id") { $0.int64(0) }
    }
}
