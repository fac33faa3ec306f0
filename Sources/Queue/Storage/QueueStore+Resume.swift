import Platform

/// What a transfer records so that a later attempt, or an agent started after a crash,
/// finds its way back: restarts in a row, the remote name an upload claimed, the file a
/// download finished. None of these change a row's state.
extension QueueStore {
    /// Counts one more start from zero of row `id`; returns how many there have been since
    /// the row was queued or the person last retried it.
    public func countRestart(_ id: Int64) throws -> Int {
        try database.transaction {
            try database.run("UPDATE transfers SET restarts = restarts + 1 WHERE id = ?", [.int(id)])
            return try database.query("SELECT restarts FROM transfers WHERE id = ?", [.int(id)]) { $0.int(0) }.first ?? 0
        }
    }

    /// Which other rows headed for a remote path make it taken.
    public enum Claimants: Sendable {
        /// Every other upload row that still has work ahead.
        case all
        /// Only those queued before this row, or already sending there (an upload on the
        /// server, or the file being made by a direct PUT): when two new rows want one name,
        /// the older keeps it and the newer moves aside.
        case olderOrStarted
    }

    /// True when another upload row of the account that still has work ahead (of the kind
    /// `claimants` names) is headed for `remotePath`: that name is taken, even while nothing
    /// is on the server yet. So is a name another upload completed at since row `id`'s
    /// attempt began: its file is there, and the look at the target that attempt made
    /// (after it began) may have come just before it.
    public func isRemotePathClaimed(_ remotePath: String, accountID: Int64, byOtherThan id: Int64,
                                    claimants: Claimants = .all) throws -> Bool {
        let which = claimants == .all ? "" : " AND (id < ? OR upload_url IS NOT NULL OR finishing = 1)"
        var arguments: [SQLValue] = [.int(accountID), .text(remotePath), .int(id)]
        if claimants == .olderOrStarted { arguments.append(.int(id)) }
        arguments.append(.int(id))
        return try database.query("""
            SELECT 1 FROM transfers
            WHERE account_id = ? AND remote_path = ? AND id != ? AND direction = 'upload'
              AND ((state IN \(TransferState.unfinishedSQL)\(which))
                   OR (state = \(TransferState.completed.sql) AND completed_at >= (SELECT started_at FROM transfers WHERE id = ?)))
            LIMIT 1
            """, arguments) { _ in true }.first ?? false
    }

    /// Makes `remotePath` row `id`'s target unless another row claims it already (see
    /// `isRemotePathClaimed`); checked and written in one transaction, so two rows never
    /// take one name.
    public func claimRemotePath(_ id: Int64, _ remotePath: String, accountID: Int64, claimants: Claimants = .all) throws -> Bool {
        try database.transaction {
            if try isRemotePathClaimed(remotePath, accountID: accountID, byOtherThan: id, claimants: claimants) { return false }
            try database.run("UPDATE transfers SET remote_path = ? WHERE id = ?", [.text(remotePath), .int(id)])
            return true
        }
    }

    /// The server's ETag of the file an upload made, so that the next new version of it
    /// replaces this one.
    public func recordMadeVersion(_ id: Int64, etag: String) throws {
        try database.run("UPDATE transfers SET version_etag = ? WHERE id = ?", [.text(etag), .int(id)])
    }

    /// A download whose bytes are whole: their SHA-256 and size, kept before the file moves
    /// into place, so that an agent killed right after the move recognises its own file.
    /// `etag` is the server's ETag of the version downloaded, for edits that go back;
    /// `placed` the file written (`fstat` after its last byte), which is what Local Drive
    /// tracks, not what is at the name when the row completes (an edit, or another file
    /// renamed there, in between).
    public func recordDownloadedFile(_ id: Int64, sha256: String, bytes: Int64, etag: String? = nil,
                                     placed: FileFingerprint? = nil) throws {
        try database.run("UPDATE transfers SET sha256 = ?, bytes_total = ?, version_etag = ?, \(FileFingerprint.transferAssignments) WHERE id = ?",
                         [.text(sha256), .int(bytes), .optionalText(etag)] + FileFingerprint.columnValues(placed) + [.int(id)])
    }

    /// The file a download put in place is another than the one written (a copy, where the
    /// file system could neither link nor rename without replacing): its fingerprint.
    public func recordPlacedFile(_ id: Int64, _ placed: FileFingerprint) throws {
        try database.run("UPDATE transfers SET \(FileFingerprint.transferAssignments) WHERE id = ? AND direction = 'download'",
                         placed.columnValues + [.int(id)])
    }
}
