import Platform

/// Instant upload's memory: per rule, the files it took, so a scan after a restart, an
/// overflow or a reinstall (with the state folder kept) queues only what is new.
extension QueueStore {
    public func watchMemory(rule: String) throws -> WatchMemory? {
        try database.query("SELECT id, folder, baseline_at FROM watch_rules WHERE id = ?", [.text(rule)]) { r in
            try WatchMemory(rule: r.text("id"), folder: LocalPath(bytes: r.blob("folder")), baselineAt: r.optionalInt64("baseline_at"))
        }.first
    }

    /// Starts the memory of `rule` over for `folder`, forgetting every file it took.
    public func resetWatchMemory(rule: String, folder: LocalPath, baselineAt: Int64? = nil) throws {
        try database.transaction(durable: true) {
            try database.run("DELETE FROM watch_rules WHERE id = ?", [.text(rule)])
            try database.run("INSERT INTO watch_rules (id, folder, baseline_at, created_at) VALUES (?, ?, ?, ?)",
                             [.text(rule), .blob(folder.bytes), .optionalInt(baselineAt), .int(nowMilliseconds())])
        }
    }

    /// Forgets `rule` and every file it took (its queued uploads stay in the queue).
    public func removeWatchMemory(rule: String) throws {
        try database.transaction(durable: true) {
            _ = try database.run("DELETE FROM watch_rules WHERE id = ?", [.text(rule)])
        }
    }

    /// Records the baseline: the files in the folder now are not uploaded.
    public func recordBaseline(rule: String, files: [TakenFile], at time: Int64 = nowMilliseconds()) throws {
        try database.transaction(durable: true) {
            guard try recordTaken(rule: rule, files) else { return }
            try database.run("UPDATE watch_rules SET baseline_at = ? WHERE id = ?", [.int(time), .text(rule)])
        }
    }

    /// The path and fingerprint of every file `rule` took, handed to `body` as each is
    /// read: the memory of a rule on a large library is loaded without a copy of it all.
    public func eachTakenFile(rule: String, _ body: (LocalPath, FileFingerprint) -> Void) throws {
        try database.query("SELECT path, fp_device, fp_inode, fp_size, fp_mtime_ns FROM watch_taken WHERE rule = ?", [.text(rule)]) { r in
            body(LocalPath(bytes: try r.blob("path")), try r.requiredFingerprint())
        }
    }

    /// What `rule` recorded at these paths, with how their uploads stand, by path: a found
    /// file with the fingerprint recorded at its path was taken already; another version
    /// of it goes to the upload that waits for it, if one does.
    public func takenRecords(rule: String, paths: [LocalPath]) throws -> [LocalPath: TakenRecord] {
        var found: [LocalPath: TakenRecord] = [:]
        for chunk in Self.chunks(of: paths) {
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            for record in try database.query("""
                SELECT \(Self.recordColumns) WHERE w.rule = ? AND w.path IN (\(marks))
                """, [.text(rule)] + chunk.map { .blob($0.bytes) }, row: Self.takenRecord) {
                found[record.file.path] = record
            }
        }
        return found
    }

    /// Files `rule` took for upload (or as copies) of these sizes, by size, with how their
    /// uploads stand: the only ones a new file can have the same content as.
    public func takenContent(rule: String, sizes: Set<Int64>) throws -> [Int64: [TakenRecord]] {
        var found: [Int64: [TakenRecord]] = [:]
        for chunk in Self.chunks(of: sizes.sorted()) {
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            for record in try database.query("""
                SELECT \(Self.recordColumns) WHERE w.rule = ? AND w.fp_size IN (\(marks)) AND w.kind != 'baseline'
                """, [.text(rule)] + chunk.map { .int($0) }, row: Self.takenRecord) {
                found[record.file.fingerprint.size, default: []].append(record)
            }
        }
        return found
    }

    /// A long list in pieces that each fit in one statement's parameters.
    private static func chunks<T>(of values: [T]) -> [ArraySlice<T>] {
        stride(from: 0, to: values.count, by: 500).map { values[$0..<min($0 + 500, values.count)] }
    }

    static let takenColumns = """
        w.path AS path, w.fp_device AS fp_device, w.fp_inode AS fp_inode, w.fp_size AS fp_size, w.fp_mtime_ns AS fp_mtime_ns,
        w.kind AS kind, w.sha256 AS sha256, w.transfer_id AS transfer_id, w.waits_on AS waits_on
        """

    /// A record and the upload it belongs to (its own, or for a copy the one it waits on).
    static let recordColumns = """
        \(takenColumns), t.id AS t_id, t.state AS t_state, t.checkpoint_offset AS t_offset, t.upload_url AS t_url,
        t.finishing AS t_finishing, t.sha256 AS t_sha256, t.reason_code AS t_reason
        FROM watch_taken w LEFT JOIN transfers t ON t.id = coalesce(w.transfer_id, w.waits_on)
        """

    static func takenFile(_ r: Row) throws -> TakenFile {
        try TakenFile(path: LocalPath(bytes: r.blob("path")),
                      fingerprint: r.requiredFingerprint(),
                      kind: TakenFile.Kind(rawValue: r.text("kind")) ?? .upload, sha256: r.optionalText("sha256"),
                      transferID: r.optionalInt64("transfer_id"), waitsOn: r.optionalInt64("waits_on"))
    }

    static func takenRecord(_ r: Row) throws -> TakenRecord {
        let file = try takenFile(r)
        guard file.transferID != nil || file.waitsOn != nil else { return TakenRecord(file: file, upload: nil) }
        guard try r.optionalInt64("t_id") != nil else { return TakenRecord(file: file, upload: .gone) }
        let standing: TakenRecord.Upload
        switch try TransferState(rawValue: r.text("t_state")) {
        case .completed: standing = .completed(sha256: try r.optionalText("t_sha256"))
        case .failed: standing = .failed(try r.optionalText("t_reason").flatMap(ReasonCode.init(rawValue:)))
        case .queued?, .retrying?:
            let untouched = try r.int64("t_offset") == 0 && r.optionalText("t_url") == nil && !r.bool("t_finishing")
            standing = untouched ? .waiting : .started
        case .inProgress?, nil: standing = .started
        }
        return TakenRecord(file: file, upload: standing)
    }

    /// Records files `rule` took; a record at the same path is replaced (a new file there).
    /// Nothing is recorded for a rule without a memory (removed meanwhile). Call it inside
    /// the transaction that queues their uploads.
    @discardableResult
    public func recordTaken(rule: String, _ files: [TakenFile]) throws -> Bool {
        guard !files.isEmpty else { return true }
        return try database.transaction {
            guard try watchMemory(rule: rule) != nil else { return false }
            let now = nowMilliseconds()
            for file in files {
                try database.run("""
                    INSERT OR REPLACE INTO watch_taken (rule, path, fp_device, fp_inode, fp_size, fp_mtime_ns, kind, sha256, transfer_id,
                        waits_on, taken_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [.text(rule), .blob(file.path.bytes)] + file.fingerprint.columnValues + [.text(file.kind.rawValue), .optionalText(file.sha256),
                          .optionalInt(file.transferID), .optionalInt(file.waitsOn), .int(now)])
            }
            return true
        }
    }

    /// The SHA-256 of a taken file, learnt by hashing it. Call it inside the transaction
    /// that records the files it was compared with.
    public func setTakenSHA256(rule: String, path: LocalPath, sha256: String) throws {
        try database.run("UPDATE watch_taken SET sha256 = ? WHERE rule = ? AND path = ?", [.text(sha256), .text(rule), .blob(path.bytes)])
    }

    /// The file at a taken path is another version now, still the rule's (its waiting
    /// upload took it, its upload sends it, or it has the content that was sent): the
    /// record follows, keeping what it belongs to.
    public func updateTaken(rule: String, path: LocalPath, fingerprint: FileFingerprint, sha256: String?) throws {
        try database.run("""
            UPDATE watch_taken SET \(FileFingerprint.assignments), sha256 = ? WHERE rule = ? AND path = ?
            """, fingerprint.columnValues + [.optionalText(sha256), .text(rule), .blob(path.bytes)])
    }

    /// The file of an upload that waits and never started changed: the row takes the file
    /// as it is now (its fingerprint, size and remote path, and why it was taken as it was, if
    /// it was: `Transfer.takenNote`), so one row stays one upload.
    /// False when the row started meanwhile; then the upload's own checks see the change.
    public func updateWaitingUpload(_ id: Int64, fingerprint: FileFingerprint, remotePath: String, takenNote: String? = nil) throws -> Bool {
        try database.run("""
            UPDATE transfers SET \(FileFingerprint.transferAssignments), bytes_total = ?, remote_path = ?, sha256 = NULL, taken_note = ?
            WHERE id = ? AND state IN \(TransferState.sql(.queued, .retrying)) AND checkpoint_offset = 0 AND upload_url IS NULL AND finishing = 0
            """, fingerprint.columnValues + [.int(fingerprint.size), .text(RemotePath.normalize(remotePath)), .optionalText(takenNote), .int(id)]) == 1
    }

    /// Copies of `rule` that waited on an upload that failed, is gone, or completed with
    /// other content than theirs (the original changed before it was sent): each is to be
    /// sent itself now.
    public func copiesToSend(rule: String) throws -> [LocalPath] {
        try database.query("""
            SELECT w.path AS path FROM watch_taken w LEFT JOIN transfers t ON t.id = w.waits_on
            WHERE w.rule = ? AND w.waits_on IS NOT NULL AND (t.id IS NULL OR t.state = \(TransferState.failed.sql)
              OR (t.state = \(TransferState.completed.sql) AND t.sha256 IS NOT w.sha256)) ORDER BY w.id
            """, [.text(rule)]) { r in LocalPath(bytes: try r.blob("path")) }
    }

    /// The upload these copies of `rule` waited on took another version of its file before
    /// it started: it no longer carries their content. Their records are forgotten, so each
    /// is taken again like a new file (and sent itself, unless its content is still one the
    /// rule took); returns their paths. Call it inside the transaction that updates the upload.
    public func forgetCopies(rule: String, waitingOn id: Int64) throws -> [LocalPath] {
        try database.query("DELETE FROM watch_taken WHERE rule = ? AND waits_on = ? RETURNING path", [.text(rule), .int(id)]) { r in
            LocalPath(bytes: try r.blob("path"))
        }
    }

    /// Whether a copy of `rule` waits on an upload that has not completed.
    public func hasWaitingCopies(rule: String) throws -> Bool {
        try !database.query("SELECT 1 AS one FROM watch_taken WHERE rule = ? AND waits_on IS NOT NULL LIMIT 1", [.text(rule)]) { _ in 1 }.isEmpty
    }

    /// Forgets what `rule` recorded at these paths: the files there are looked at again.
    public func forgetTaken(rule: String, paths: [LocalPath]) throws {
        try database.transaction {
            for path in paths { try database.run("DELETE FROM watch_taken WHERE rule = ? AND path = ?", [.text(rule), .blob(path.bytes)]) }
        }
    }

    /// Follows a rename inside the watched folder: the records, and the uploads of this
    /// rule that have not completed, now name the file (or everything below the folder)
    /// at `new`. Only the agent changes a row in progress: such rows are asked to move
    /// (`moved_to`), and the agent writes their new path (`applyRequestedMoves`). Returns
    /// how many rows were asked, so the caller rings the agent when there are any.
    @discardableResult
    public func moveTaken(rule: String, from old: LocalPath, to new: LocalPath) throws -> Int {
        // Paths are bytes: `substr` of a blob counts bytes, and what `||` makes is cast back.
        let prefix = old.bytes + [UInt8(ascii: "/")]
        let arguments: [SQLValue] = [.blob(new.bytes), .int(old.bytes.count + 1), .text(rule),
                                     .blob(old.bytes), .int(prefix.count), .blob(prefix)]
        return try database.transaction {
            try dropUploadsOfReplaced(rule: rule, at: new, by: old)
            // A record already at a new path is of a file that is no longer there: REPLACE drops it.
            try database.run("""
                UPDATE OR REPLACE watch_taken SET path = CAST(? || substr(path, ?) AS BLOB)
                WHERE rule = ? AND (path = ? OR substr(path, 1, ?) = ?)
                """, arguments)
            try database.run("""
                UPDATE transfers SET local_path = CAST(? || substr(local_path, ?) AS BLOB)
                WHERE watch_rule = ? AND state IN \(TransferState.sql(.queued, .retrying, .failed)) AND moved_to IS NULL
                  AND (local_path = ? OR substr(local_path, 1, ?) = ?)
                """, arguments)
            // A row in progress, or one whose earlier move the agent has not written yet.
            return try database.run("""
                UPDATE transfers SET moved_to = CAST(? || substr(coalesce(moved_to, local_path), ?) AS BLOB)
                WHERE watch_rule = ? AND (state = \(TransferState.inProgress.sql) OR moved_to IS NOT NULL)
                  AND (coalesce(moved_to, local_path) = ? OR substr(coalesce(moved_to, local_path), 1, ?) = ?)
                """, arguments)
        }
    }

    /// A file renamed over one the rule took whose upload has not completed (`mv a.jpg
    /// b.jpg` while both wait for Wi-Fi): that file is gone, and its upload, left, would
    /// send the file renamed over it, which goes by its own upload, a second time. Its
    /// uploads still waiting go with it: removed when nothing was begun on the server,
    /// cancelled otherwise (the agent removes what they began). One in progress sends the
    /// file it has open.
    private func dropUploadsOfReplaced(rule: String, at path: LocalPath, by other: LocalPath) throws {
        let prefix = path.bytes + [UInt8(ascii: "/")]
        // The uploads of the records there, which the move drops: never one of the file moved.
        let there: [SQLValue] = [.text(rule), .blob(path.bytes), .int(prefix.count), .blob(prefix)]
        let ids = try withdrawWaitingUploads(where: """
            id IN (SELECT transfer_id FROM watch_taken WHERE rule = ? AND (path = ? OR substr(path, 1, ?) = ?))
            AND local_path IN (SELECT path FROM watch_taken WHERE rule = ? AND (path = ? OR substr(path, 1, ?) = ?))
            """, there + there)
        guard !ids.isEmpty else { return }
        Log.info("rule \(rule): \(path.display) was replaced by \(other.display), renamed over it, before it was sent; "
                 + (ids.count == 1 ? "its upload" : "their uploads") + " (" + ids.map { "#\($0)" }.joined(separator: ", ")
                 + ") went with it, and \(other.lastComponent.display) goes by its own")
    }

    /// Two files the rule took swapped names (`a` is now at `b`, `b` at `a`): their records
    /// and rows follow, in one transaction. Returns how many rows in progress were asked to move.
    @discardableResult
    public func exchangeTaken(rule: String, _ a: LocalPath, _ b: LocalPath) throws -> Int {
        try database.transaction {
            var asked = 0
            try LocalPath.exchange(a, b) { asked += try moveTaken(rule: rule, from: $0, to: $1) }
            return asked
        }
    }

    /// The agent writes the new paths the watcher asked for into the rows (in progress
    /// when asked); returns how many rows changed. Asked on every pass of the agent, so it
    /// only reads (through a partial index) while nothing was asked: a database another
    /// program holds locked does not stall a pass for it.
    @discardableResult
    public func applyRequestedMoves() throws -> Int {
        guard try !database.query("SELECT 1 AS one FROM transfers WHERE moved_to IS NOT NULL LIMIT 1", row: { _ in 1 }).isEmpty else { return 0 }
        return try database.run("UPDATE transfers SET local_path = moved_to, moved_to = NULL WHERE moved_to IS NOT NULL")
    }

    /// Uploads of `rule` that completed and whose original has not been dealt with yet
    /// (kept or moved to the trash): the agent may have stopped in between.
    public func uploadsAwaitingAfterStep(rule: String) throws -> [Int64] {
        try database.query("""
            SELECT transfer_id FROM watch_taken WHERE rule = ? AND kind = 'upload' AND uploaded_at IS NOT NULL AND after_upload_done = 0
            """, [.text(rule)]) { r in try r.int64("transfer_id") }
    }

    /// The file's `st_ctime` (nanoseconds) when its rule queued this upload, from the same look
    /// as the row's fingerprint: a time of the file system's own clock. Nil for a row queued
    /// otherwise, or before this was kept, or whose fingerprint changed since.
    public func queuedChangeTime(of transferID: Int64) throws -> Int64? {
        try database.query("SELECT queued_ctime_ns FROM transfers WHERE id = ?", [.int(transferID)]) { $0.optionalInt64(0) }.first ?? nil
    }

    /// The original of this upload has been dealt with; `kept` says why it stayed where
    /// its rule would have moved it to the trash.
    public func markAfterUploadDone(transferID: Int64, kept: String? = nil) throws {
        try database.run("UPDATE watch_taken SET after_upload_done = 1, kept_reason = ? WHERE transfer_id = ?",
                         [.optionalText(kept), .int(transferID)])
    }

    /// Called in the transaction that completes an upload: its record learns the content,
    /// and copies that waited on it with that content are copies of content sent. A copy
    /// of other content (the original changed while its upload ran, and the new version
    /// went) keeps waiting on the completed row, and `copiesToSend` hands it back to be sent.
    func noteUploadCompleted(_ id: Int64, sha256: String?) throws {
        try database.run("UPDATE watch_taken SET sha256 = coalesce(?, sha256), uploaded_at = ? WHERE transfer_id = ?",
                         [.optionalText(sha256), .int(nowMilliseconds()), .int(id)])
        try database.run("UPDATE watch_taken SET waits_on = NULL WHERE waits_on = ? AND sha256 = ?", [.int(id), .optionalText(sha256)])
    }

    // MARK: Status

    public func setWatchStatus(rule: String, _ status: WatchStatusRecord) throws {
        try database.run("""
            UPDATE watch_rules SET state = ?, troubles = ?, waiting = ?, watched_folders = ?, overflows = ?, scans = ?, status_at = ? WHERE id = ?
            """, [.text(status.state), .text(status.troubles), .text(status.waiting), .int(status.watchedFolders), .int(status.overflows),
                  .int(status.scans), .int(status.at), .text(rule)])
    }

    /// What `watch list` shows for `rule`, from its rows and the status its watcher left.
    public func watchOverview(rule: String) throws -> WatchOverview {
        try database.snapshot { try watchOverviewOfOneMoment(rule: rule) }
    }

    private func watchOverviewOfOneMoment(rule: String) throws -> WatchOverview {
        var overview = WatchOverview()
        try database.query("SELECT kind, count(*) AS n FROM watch_taken WHERE rule = ? GROUP BY kind", [.text(rule)]) { r in
            let n = try r.int("n")
            if try r.text("kind") == TakenFile.Kind.baseline.rawValue { overview.baseline += n } else { overview.taken += n }
        }
        if let last = try database.query("""
            SELECT path, taken_at FROM watch_taken WHERE rule = ? AND kind = ? ORDER BY id DESC LIMIT 1
            """, [.text(rule), .text(TakenFile.Kind.upload.rawValue)], row: { r in try (LocalPath(bytes: r.blob("path")), r.int64("taken_at")) }).first {
            overview.lastTaken = last.0
            overview.lastTakenAt = last.1
        }
        try database.query("""
            SELECT state, reason_code, reason_message, reason_action, count(*) AS n FROM transfers
            WHERE watch_rule = ? AND state != \(TransferState.completed.sql) GROUP BY state, reason_code, reason_message, reason_action
            """, [.text(rule)]) { r in
            let n = try r.int("n")
            let state = try TransferState(rawValue: r.text("state")) ?? .failed
            if state == .failed { overview.failed += n; return }
            overview.pending += n
            if state == .queued, let code = try r.optionalText("reason_code").flatMap(ReasonCode.init(rawValue:)),
               [.wifi, .battery, .paused, .offline, .folderMissing].contains(code) {
                overview.held.append(.init(reason: Reason(code, try r.optionalText("reason_message"), action: try r.optionalText("reason_action")),
                                           count: n))
            }
        }
        overview.kept = try database.query("""
            SELECT path, kept_reason FROM watch_taken WHERE rule = ? AND kept_reason IS NOT NULL ORDER BY id DESC LIMIT ?
            """, [.text(rule), .int(WatchOverview.keptShown)]) { r in
            KeptOriginal(path: LocalPath(bytes: try r.blob("path")), reason: try r.text("kept_reason"))
        }
        overview.keptCount = try database.query("""
            SELECT count(*) AS n FROM watch_taken WHERE rule = ? AND kept_reason IS NOT NULL
            """, [.text(rule)]) { r in try r.int("n") }.first ?? 0
        overview.status = try watchStatus(rule: rule)
        return overview
    }

    /// What the agent last reported about the rule (nil while no agent reports it).
    public func watchStatus(rule: String) throws -> WatchStatusRecord? {
        try database.query("""
            SELECT state, troubles, waiting, watched_folders, overflows, scans, status_at FROM watch_rules WHERE id = ? AND state IS NOT NULL
            """, [.text(rule)]) { r in
            try WatchStatusRecord(state: r.text("state"), troubles: r.optionalText("troubles") ?? "[]", waiting: r.optionalText("waiting") ?? "{}",
                                  watchedFolders: r.int("watched_folders"), overflows: r.int("overflows"), scans: r.int("scans"),
                                  at: r.optionalInt64("status_at") ?? 0)
        }.first
    }

    /// Whether an upload of the rule is not completed: one index search per state, however
    /// many files the rule took before.
    public func hasUnfinishedRows(rule: String) throws -> Bool {
        try !database.query("""
            SELECT 1 FROM transfers WHERE watch_rule = ? AND state IN \(TransferState.sql(.queued, .inProgress, .retrying, .failed)) LIMIT 1
            """, [.text(rule)]) { $0.int(0) }.isEmpty
    }

    /// Remembers that a file system on `device` was mounted on `folder` while a rule
    /// watched it (see `mountPoints`). The devices last seen there are kept, a few per
    /// folder: a FUSE or tmpfs mount gets a new number each time.
    public func rememberMountPoint(_ folder: LocalPath, device: UInt64) throws {
        try database.transaction {
            try database.run("""
                INSERT INTO mount_points (folder, device, seen_at) VALUES (?, ?, ?)
                ON CONFLICT DO UPDATE SET seen_at = excluded.seen_at
                """, [.blob(folder.bytes), .int(Int64(bitPattern: device)), .int(nowMilliseconds())])
            try database.run("""
                DELETE FROM mount_points WHERE folder = ?1 AND device NOT IN
                    (SELECT device FROM mount_points WHERE folder = ?1 ORDER BY seen_at DESC LIMIT \(Self.mountPointsKept))
                """, [.blob(folder.bytes)])
        }
    }

    /// Devices remembered per folder.
    static let mountPointsKept = 8

    /// Forgets the mount points of folders no rule watches.
    public func keepMountPoints(of folders: Set<LocalPath>) throws {
        let marks = Array(repeating: "?", count: folders.count).joined(separator: ", ")
        try database.run("DELETE FROM mount_points WHERE folder NOT IN (\(marks))", folders.map { .blob($0.bytes) })
    }

    /// The folders seen as mount points while they were watched, with the devices seen on
    /// each: the evidence that a folder found empty is a card taken out.
    public func mountPoints() throws -> [(folder: LocalPath, device: UInt64)] {
        try database.query("SELECT folder, device FROM mount_points") { r in
            (LocalPath(bytes: try r.blob("folder")), UInt64(bitPattern: try r.int64("device")))
        }
    }

    /// Forgets the status of every rule (when the agent stops, it is no longer true).
    public func clearWatchStatus() throws {
        try database.run("UPDATE watch_rules SET state = NULL, troubles = NULL, waiting = NULL, status_at = NULL")
    }
}
