import Platform

/// A file in Local Drive that a download put there, whose edits go back to the server as
/// its new versions: where it came from, the server's version it is, and the local file as
/// it was put in place or last sent.
public struct LocalDriveFile: Sendable, Equatable {
    public var localPath: LocalPath
    public var accountID: Int64
    public var remotePath: String
    /// The server's ETag of the version the local file is; nil when the server gave none.
    public var etag: String?
    public var fingerprint: FileFingerprint
    public var sha256: String
    /// The download that put it there: clearing or cancelling it ends the round trip.
    public var downloadID: Int64
}

/// Local Drive's round trip: what a tracked download leaves behind, and the one waiting
/// upload per edited file. Not a sync folder: only files a download put there are known,
/// and nothing here ever deletes anything on the server.
extension QueueStore {
    /// Called in the transaction that completes row `row`: a download whose edits go back
    /// is remembered with the file it put in place; an upload that is a new version of a
    /// remembered file makes that version the one remembered (a conflicted copy becomes the
    /// server file it stands for from now on).
    func noteLocalDrive(completed row: Transfer, sha256: String?) throws {
        if row.direction == .download {
            // The file as the download wrote it (`recordDownloadedFile`; a run before that
            // recorded none: as it is now), read here, not from a row read before the job ran.
            guard let download = try database.query("""
                      SELECT track_edits, fp_device, fp_inode, fp_size, fp_mtime_ns FROM transfers WHERE id = ?
                      """, [.int(row.id)], row: { (tracked: try $0.bool("track_edits"), written: try $0.fingerprint()) }).first,
                  download.tracked, let sha256 else { return }
            let written = download.written
            let now = FileFingerprint.ofRegularFile(notFollowing: row.localPath)
            guard let placed = written ?? now else { return }
            if let now, now != placed, try replacedByTrackedFile(row.localPath, now: now) { return }
            try followRenamedAway(from: row.localPath)
            try database.run("""
                INSERT OR REPLACE INTO local_drive (local_path, account_id, remote_path, etag, fp_device, fp_inode, fp_size, fp_mtime_ns,
                    sha256, download_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.blob(row.localPath.bytes), .int(row.accountID), .text(row.remotePath), .optionalText(row.versionETag)]
                    + placed.columnValues + [.text(sha256), .int(row.id)])
            try dropNewVersionsOfGoneFile(at: row.localPath)
        } else if row.newVersionOf != nil, let sent = row.fingerprint, let sha256 {
            // Renamed within Local Drive while it was sent: the pass wrote the new name into
            // the row (`applyRequestedMoves`) before it recorded this outcome. Only the file
            // it was an edit of learns of it: a download that put a file at the name after
            // this version was queued (its file deleted and downloaded again while it was
            // sent) holds an older version, which would otherwise be taken for a save made
            // since, and sent over this one.
            //
            // Saved again while it was sent (the watcher left that save to this row): Local
            // Drive looks at the file again once the row is completed, as at the next start
            // (`LocalDriveWatch.versionSent`), and sends it as the new version of the one
            // just made unless it holds the same bytes (a save without changes).
            try database.run("""
                UPDATE local_drive SET remote_path = ?, etag = ?, \(FileFingerprint.assignments), sha256 = ?
                WHERE local_path = ? AND (SELECT completed_at FROM transfers WHERE id = local_drive.download_id) <= ?
                """, [.text(row.remotePath), .optionalText(row.versionETag)] + sent.columnValues
                    + [.text(sha256), .blob(row.localPath.bytes), .int(row.createdAt)])
        }
    }

    /// Whether the file at `path` (`now`), where a download put its own moments ago, is a
    /// file Local Drive tracks: the tracked file the name was taken from, renamed back over
    /// the download before its row completed (`mv report.odt mine.odt`, the download, `mv
    /// mine.odt report.odt`), or another tracked one renamed over it. Then the download's
    /// file is gone, and the tracking stays the tracked file's: recorded for the download,
    /// with the file at the name taken for it, the tracked file's edits would go to the
    /// server file just downloaded.
    private func replacedByTrackedFile(_ path: LocalPath, now: FileFingerprint) throws -> Bool {
        guard try localDrivePath(of: now) != nil else { return false }
        Log.info("Local Drive: \(path.display) was downloaded, and a downloaded file Local Drive follows was renamed over it at once; that file keeps its own server file, and the download's edits are not followed")
        return true
    }

    /// A download put its file at `path`, where a tracked file was. That file may have been
    /// renamed within its folder, or into a folder below (two down at most), moments ago,
    /// before the watcher followed the rename (it waits a few seconds for an editor's save
    /// into the name): found there as it was last sent, or as a new version waiting takes
    /// it, its tracking and new versions follow it now, before this download's take the name.
    ///
    /// By the whole fingerprint: a rename keeps a file's size and time, and a file saved
    /// after the tracked one was deleted is often given the inode the deletion freed (ext4
    /// does), which by device and inode alone would be taken for it renamed, and sent over
    /// the server's file as its new version.
    private func followRenamedAway(from path: LocalPath) throws {
        let sought = try trackedFingerprints(at: path)
        guard !sought.isEmpty else { return }
        // Two folders down at most: the walk runs in the transaction that completes the
        // download, once for each file downloaded where a tracked one was.
        var tree = FolderTree(links: .skipped)
        tree.followsRootLink = false
        tree.maximumDepth = 2
        if let renamed = tree.files(in: path.parent, matching: sought, except: { candidate, _ in candidate == path }).first {
            try moveLocalDrive(path, to: renamed.path)
        }
    }

    /// The file tracked at `path` as it was last sent, and as each of its edits waiting to
    /// go back has it: what it is found by elsewhere, renamed (a rename keeps size and time).
    /// Empty when nothing is tracked there.
    public func trackedFingerprints(at path: LocalPath) throws -> Set<FileFingerprint> {
        guard let tracked = try localDriveFile(at: path) else { return [] }
        let waiting = try database.query("""
            SELECT fp_device, fp_inode, fp_size, fp_mtime_ns FROM transfers WHERE local_path = ? AND moved_to IS NULL
              AND new_version_of IS NOT NULL AND direction = 'upload' AND fp_device IS NOT NULL
              AND state IN \(TransferState.sql(.queued, .retrying, .failed))
            """, [.blob(path.bytes)]) { try $0.requiredFingerprint() }
        return Set(waiting).union([tracked.fingerprint])
    }

    /// A download put its file at `path`, and a download takes only a free name: a tracked
    /// file that was there is gone (deleted; a rename takes its new versions along). New
    /// versions of it still waiting there were edits of that file, and went with it. Left,
    /// one would send this download back to the server as its own new version (or, had the
    /// server's copy moved on, beside it as a conflicted copy). Those with nothing on the
    /// server are removed; one with an upload begun there is cancelled as a plain upload
    /// (the agent removes what it began), so that its cancel does not decline this
    /// download's own edits (`declineNewVersions`).
    private func dropNewVersionsOfGoneFile(at path: LocalPath, _ happened: String = "was downloaded again",
                                           gone: String = "deleted there") throws {
        let ids = try withdrawWaitingUploads(where: "local_path = ? AND new_version_of IS NOT NULL", [.blob(path.bytes)],
                                             alsoSet: "new_version_of = NULL")
        guard !ids.isEmpty else { return }
        Log.info("Local Drive: \(path.display) \(happened); the edit" + (ids.count == 1 ? "" : "s")
                 + " of the file \(gone), waiting to go back (" + ids.map { "#\($0)" }.joined(separator: ", ")
                 + "), went with it and " + (ids.count == 1 ? "is" : "are") + " not sent")
    }

    /// Whether new version `id` lost its file: the file now at its name (`fileNow`, changed
    /// since the row was queued) is not the one the edit was made in. That file was deleted
    /// and a download put another there (the tracking at the name is of a download that
    /// completed after the row was queued, or the file is a tracked download as it was put
    /// there), or another tracked file was renamed over it before Local Drive followed the
    /// rename (the file is that one as tracked, or as its waiting edit has it). The edit
    /// went with its file: sent now, the file at the name would go as its new version. If
    /// so, the row is cancelled as a plain upload (the agent removes what it began on the
    /// server), as an edit still waiting is (`dropNewVersionsOfGoneFile`), and true.
    ///
    /// Asked once `tradedNames` has said the file did not trade names with another.
    public func cancelNewVersionOfGoneFile(_ id: Int64, fileNow: FileFingerprint) throws -> Bool {
        let cancelled = try database.run("""
            UPDATE transfers SET cancel_requested = 1, new_version_of = NULL
            WHERE id = ? AND new_version_of IS NOT NULL AND (
              EXISTS (SELECT 1 FROM local_drive d JOIN transfers download ON download.id = d.download_id
                      WHERE d.local_path = transfers.local_path AND download.completed_at > transfers.created_at)
              OR EXISTS (SELECT 1 FROM local_drive WHERE \(FileFingerprint.matching()))
              OR EXISTS (SELECT 1 FROM transfers other WHERE other.local_path != transfers.local_path
                         AND other.new_version_of IS NOT NULL AND other.direction = 'upload'
                         AND other.state != \(TransferState.completed.sql) AND \(FileFingerprint.matching("other")))
            )
            """, [.int(id)] + fileNow.columnValues + fileNow.columnValues) > 0
        if cancelled, let path = try transfer(id: id)?.localPath {
            Log.info("Local Drive: the file at \(path.display) was replaced while its edit waited to be sent (#\(id)): deleted and downloaded again, or another downloaded file renamed over it; the edit went with the file it was made in and is not sent")
        }
        return cancelled
    }

    /// Where the file of new version `row` is, if it traded names with another tracked file
    /// (the file now at its name, `fileNow`, is that one, and the other's name holds this
    /// row's file) before Local Drive followed it: the row waits for that, and goes from there.
    public func tradedNames(_ row: Transfer, fileNow: FileFingerprint) throws -> LocalPath? {
        guard row.newVersionOf != nil, let mine = row.fingerprint,
              let other = try localDrivePath(of: fileNow, otherThan: row.localPath),
              FileFingerprint.ofRegularFile(notFollowing: other) == mine else { return nil }
        return other
    }

    /// The name Local Drive knows the file with `fingerprint` at, other than `path` if given:
    /// the tracked file there is it, as last sent, or its edit, waiting or being sent, is.
    public func localDrivePath(of fingerprint: FileFingerprint, otherThan path: LocalPath? = nil) throws -> LocalPath? {
        let isFile = FileFingerprint.matching()
        let other: SQLValue = path.map { .blob($0.bytes) } ?? .null
        return try database.query("""
            SELECT local_path FROM local_drive WHERE \(isFile) AND local_path IS NOT ?
            UNION ALL
            SELECT coalesce(moved_to, local_path) AS local_path FROM transfers
            WHERE new_version_of IS NOT NULL AND direction = 'upload' AND state != \(TransferState.completed.sql)
              AND \(isFile) AND coalesce(moved_to, local_path) IS NOT ?
            LIMIT 1
            """, fingerprint.columnValues + [other] + fingerprint.columnValues + [other]) {
            LocalPath(bytes: try $0.blob("local_path"))
        }.first
    }

    /// Every file Local Drive remembers.
    public func localDriveFiles() throws -> [LocalDriveFile] {
        try database.query("SELECT * FROM local_drive", row: Self.localDriveFile)
    }

    public func localDriveFile(at path: LocalPath) throws -> LocalDriveFile? {
        try database.query("SELECT * FROM local_drive WHERE local_path = ?", [.blob(path.bytes)], row: Self.localDriveFile).first
    }

    /// The files Local Drive remembers at `path`, or below it if it was a folder (a range of
    /// the table's key: names below `a` sort between `a/` and `a0`).
    public func localDriveFiles(atOrBelow path: LocalPath) throws -> [LocalDriveFile] {
        let below = path.bytes + [UInt8(ascii: "/")], past = path.bytes + [UInt8(ascii: "/") + 1]
        return try database.query("SELECT * FROM local_drive WHERE local_path = ? OR (local_path >= ? AND local_path < ?)",
                                  [.blob(path.bytes), .blob(below), .blob(past)], row: Self.localDriveFile)
    }

    static func localDriveFile(_ r: Row) throws -> LocalDriveFile {
        try LocalDriveFile(localPath: LocalPath(bytes: r.blob("local_path")), accountID: r.int64("account_id"),
                           remotePath: r.text("remote_path"), etag: r.optionalText("etag"),
                           fingerprint: r.requiredFingerprint(),
                           sha256: r.text("sha256"), downloadID: r.int64("download_id"))
    }

    /// The file at `path` changed only in its time (a `touch`, an editor that saved the same
    /// bytes): remembered as it is now, nothing to send.
    public func acknowledgeLocalDrive(_ path: LocalPath, fingerprint: FileFingerprint) throws {
        try database.run("""
            UPDATE local_drive SET \(FileFingerprint.assignments) WHERE local_path = ?
            """, fingerprint.columnValues + [.blob(path.bytes)])
    }

    /// Queues the file at `file.localPath`, as it is now (`fingerprint`), as the new version
    /// of its server file. One unfinished row per file, so that no two versions are sent
    /// against the same server version (the second would find the first there and go beside
    /// it as a conflicted copy): a row for it that has not started yet takes the new
    /// fingerprint; one that has started notices the change itself, and what it does not
    /// send is looked at again once it completes (`LocalDriveWatch.versionSent`). A failed
    /// one stays as it failed, and the new save goes in a row of its own. `takenNote` says
    /// why the save was taken as it was (see `Transfer.takenNote`). Returns the row's id,
    /// and whether it is new.
    @discardableResult
    public func queueNewVersion(of file: LocalDriveFile, as fingerprint: FileFingerprint,
                                takenNote: String? = nil) throws -> (id: Int64, isNew: Bool) {
        // Only an edit of this download's file: one of a file deleted before it was put
        // there, still being sent, would send this save as that file's new version.
        let since = "AND t.created_at >= coalesce((SELECT completed_at FROM transfers WHERE id = \(file.downloadID)), 0)"
        return try database.transaction(durable: true) {
            let unfinished = try database.query("""
                SELECT id, state IN \(TransferState.sql(.queued, .retrying)) AND upload_url IS NULL AND finishing = 0 AS waiting
                FROM (\(Self.newVersionRows(at: "?", columns: "id, state, upload_url, finishing",
                                            where: "direction = 'upload' AND state NOT IN \(TransferState.sql(.completed, .failed)) \(since)")))
                ORDER BY id DESC LIMIT 1
                """, [.blob(file.localPath.bytes), .blob(file.localPath.bytes)]) { (id: try $0.int64("id"), waiting: try $0.bool("waiting")) }.first
            if let unfinished {
                if unfinished.waiting {
                    try database.run("""
                        UPDATE transfers SET \(FileFingerprint.transferAssignments), bytes_total = ?, taken_note = ? WHERE id = ?
                        """, fingerprint.columnValues + [.int(fingerprint.size), .optionalText(takenNote), .int(unfinished.id)])
                }
                return (unfinished.id, false)
            }
            let id = try enqueue([NewTransfer(direction: .upload, origin: .manual, accountID: file.accountID, localPath: file.localPath,
                                              remotePath: file.remotePath, bytesTotal: fingerprint.size, fingerprint: fingerprint,
                                              replacesETag: file.etag, newVersion: true, takenNote: takenNote)])[0]
            return (id, true)
        }
    }

    /// The tracked file at `path`, put there by `download`, was deleted, and nothing came
    /// back at its name within the seconds an editor's save by writing anew takes: its round
    /// trip ends, and its edits still waiting went with it. Kept, the name would stay
    /// tracked for ever, and a file saved there weeks later would go over the server's file
    /// as its new version. The file that was tracked, nil when the tracking was not that.
    public func forgetDeletedLocalDrive(_ path: LocalPath, download: Int64) throws -> LocalDriveFile? {
        try database.transaction {
            guard let file = try localDriveFile(at: path), file.downloadID == download else { return nil }
            try database.run("DELETE FROM local_drive WHERE local_path = ?", [.blob(path.bytes)])
            try dropNewVersionsOfGoneFile(at: path, "is gone (deleted, or moved out of Local Drive) and nothing was saved at its name again",
                                          gone: "gone")
            return file
        }
    }

    /// Follows a rename within Local Drive: the file (or every file below the folder) at
    /// `old` is now at `new`, and its edits still go back; so do its new versions not sent
    /// yet. Only the agent changes a row in progress: such rows are asked to move
    /// (`moved_to`, as a watch rule's are), and their completion reads the path asked for.
    /// With `download`, only while the file at `old` is still that download's: another
    /// download at the name since means the rename was followed when it completed. False
    /// when it was not followed for that reason.
    @discardableResult
    public func moveLocalDrive(_ old: LocalPath, to new: LocalPath, whileTrackedBy download: Int64? = nil) throws -> Bool {
        let prefix = old.bytes + [UInt8(ascii: "/")]
        let arguments: [SQLValue] = [.blob(new.bytes), .int(old.bytes.count + 1), .blob(old.bytes), .int(prefix.count), .blob(prefix)]
        return try database.transaction {
            if let download, try database.query("SELECT 1 AS one FROM local_drive WHERE local_path = ? AND download_id = ?",
                                                [.blob(old.bytes), .int(download)], row: { _ in 1 }).isEmpty { return false }
            // A tracked file renamed over another (`mv a b`): the edits of the one replaced,
            // still waiting, would send the one renamed over it as that file's new version.
            try dropNewVersionsOfGoneFile(at: new, "was replaced by \(old.display), renamed over it", gone: "that was there")
            try database.run("""
                UPDATE OR REPLACE local_drive SET local_path = CAST(? || substr(local_path, ?) AS BLOB)
                WHERE local_path = ? OR substr(local_path, 1, ?) = ?
                """, arguments)
            try database.run("""
                UPDATE transfers SET local_path = CAST(? || substr(local_path, ?) AS BLOB)
                WHERE new_version_of IS NOT NULL AND direction = 'upload' AND state IN \(TransferState.sql(.queued, .retrying, .failed))
                  AND moved_to IS NULL AND (local_path = ? OR substr(local_path, 1, ?) = ?)
                """, arguments)
            try database.run("""
                UPDATE transfers SET moved_to = CAST(? || substr(coalesce(moved_to, local_path), ?) AS BLOB)
                WHERE new_version_of IS NOT NULL AND direction = 'upload' AND (state = \(TransferState.inProgress.sql) OR moved_to IS NOT NULL)
                  AND (coalesce(moved_to, local_path) = ? OR substr(coalesce(moved_to, local_path), 1, ?) = ?)
                """, arguments)
            return true
        }
    }

    /// Two files in Local Drive swapped names (`a` is now at `b`, `b` at `a`): each one's
    /// tracking and new versions follow it, in one transaction.
    public func exchangeLocalDrive(_ a: LocalPath, _ b: LocalPath) throws {
        try database.transaction {
            try LocalPath.exchange(a, b) { try moveLocalDrive($0, to: $1) }
        }
    }

    /// New versions leaving the queue unsent (cancelled, or failed and cleared), those of the
    /// rows `condition` picks (over `transfers t`), are declined: Local Drive remembers the
    /// file as that row was to send it, so the edit is not queued again when the agent next
    /// starts. The next change goes as the new version of the same server version.
    func declineNewVersions(_ condition: String, _ arguments: [SQLValue]) throws {
        let declined = Self.newVersionRows(at: "local_drive.local_path", columns: "t.id, t.fp_device, t.fp_inode, t.fp_size, t.fp_mtime_ns",
                                           where: "t.direction = 'upload' AND t.state != \(TransferState.completed.sql) AND t.fp_size IS NOT NULL AND \(condition)")
        try database.run("""
            UPDATE local_drive SET (fp_device, fp_inode, fp_size, fp_mtime_ns) =
                (SELECT fp_device, fp_inode, fp_size, fp_mtime_ns FROM (\(declined)) ORDER BY id DESC LIMIT 1)
            WHERE EXISTS (SELECT 1 FROM (\(declined)))
            """, arguments + arguments + arguments + arguments)
    }

    /// The new-version rows (`transfers t`) of the file at `path` (an SQL expression, used
    /// twice): those there, and those in progress asked to move there (`moved_to`), each
    /// found through its own index; `columns` of those where `condition` holds.
    static func newVersionRows(at path: String, columns: String, where condition: String) -> String {
        """
        SELECT \(columns) FROM transfers t WHERE t.local_path = \(path) AND t.moved_to IS NULL AND t.new_version_of IS NOT NULL AND \(condition)
        UNION ALL
        SELECT \(columns) FROM transfers t WHERE t.moved_to IS NOT NULL AND t.moved_to = \(path) AND t.new_version_of IS NOT NULL AND \(condition)
        """
    }

    /// Forgets the files whose download left the queue (cleared or cancelled): their edits
    /// no longer go back.
    func forgetUntrackedLocalDrive() throws {
        try database.run("DELETE FROM local_drive WHERE download_id NOT IN (SELECT id FROM transfers)")
    }
}
