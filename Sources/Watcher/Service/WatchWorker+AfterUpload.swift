import Platform
import Queue
import Transport

/// `after_upload = trash`: the original goes to the person's trash once its upload is
/// complete, only if the server showed the file at its name afterwards (`verifiedAt`), and
/// only if it is still the very file that was uploaded, to its last byte. An original that stays says why,
/// on the rule's record of it, for `watch list`.
extension WatchWorker {
    /// An upload of a rule completed.
    func afterUpload(_ row: Transfer, store: QueueStore) throws {
        guard let id = row.watchRule, row.origin == .auto, row.direction == .upload else { return }
        // A copy may have waited on it, and its content may not be what went.
        if waitingCopies.contains(id) { retry(after: .zero) }
        let kept = rules.first(where: { $0.id == id })?.afterUpload == .trash ? try moveToTrash(upload: row.id, rule: id, store: store) : nil
        try store.markAfterUploadDone(transferID: row.id, kept: kept)
        if kept != nil { statusDirty.insert(id) }
    }

    /// Uploads that completed while the agent was stopping, before their original was
    /// dealt with.
    func finishAfterUploads(of rule: WatchRule, store: QueueStore) throws {
        for transferID in try store.uploadsAwaitingAfterStep(rule: rule.id) {
            let kept = rule.afterUpload == .trash ? try moveToTrash(upload: transferID, rule: rule.id, store: store) : nil
            try store.markAfterUploadDone(transferID: transferID, kept: kept)
        }
    }

    /// Whether anything may have written the original since its row was queued: its inode
    /// changed since then (`st_ctime`). Every write moves it, and so does setting the time back
    /// or a rename; a file untouched since it was queued is the file the upload read, and is
    /// not read again (a video of some GB would hold up every rule meanwhile).
    ///
    /// Untouched is told by the file system's clock alone: the change time is still the one
    /// the rule saw when it queued the file (`queuedChangeTime`). Set against the queue's
    /// clock instead, a write to a NAS whose clock runs behind this machine's looked older
    /// than the row. Unknown (a row from before it was kept), the file is read again. And a
    /// change time from a second before the row or later still counts as a write: one in the
    /// same tick of a coarse clock leaves the change time as it was.
    static func mayHaveBeenWritten(_ row: Transfer, queuedChangeTime: Int64?) -> Bool {
        guard let queuedChangeTime, let st = try? FileIO.linkStatus(row.localPath) else { return true }
        return st.st_ctim.nanoseconds != queuedChangeTime || st.st_ctim.milliseconds >= row.createdAt - 1000
    }

    /// Moves the original of an upload to the trash; returns why it stays instead, or nil
    /// when it went (or there is nothing left to keep).
    private func moveToTrash(upload transferID: Int64, rule: String, store: QueueStore) throws -> String? {
        // The row as it stands now (the file may have been renamed since it was queued);
        // a row cleared meanwhile leaves the file where it is.
        guard let row = try store.transfer(id: transferID), row.state == .completed, let uploaded = row.fingerprint else { return nil }
        // Gone (deleted, or renamed where the rule did not see it): nothing to keep or move.
        guard let now = FileFingerprint.ofRegularFile(notFollowing: row.localPath) else { return nil }
        let kept: String
        if row.verifiedAt == nil {
            // The upload's own replies said it went; only the server showing the file
            // lets the only other copy go.
            kept = "the server did not show the uploaded file when asked afterwards (or was not asked: the rule did not move originals to the trash when it was sent), so this copy is kept"
        } else if row.sha256 == nil {
            kept = "the upload's content was not recorded, so this copy is kept"
        } else if now != uploaded {
            kept = "it changed or was replaced after its upload"
        } else if Self.mayHaveBeenWritten(row, queuedChangeTime: try store.queuedChangeTime(of: row.id)),
                  ContentHash.sha256(of: row.localPath, expecting: now) != row.sha256 {
            // Rewritten where it is with its size and time kept (a tag editor preserving the
            // date): the fingerprint cannot tell, the bytes can.
            kept = "its content is not what was uploaded (changed where it is, its size and time kept), or it could not be read again to compare, so this copy is kept"
        } else {
            CrashWindow.trashChecked.pauseIfTesting(transfer: row.id)
            let trash = Trash(paths: options.paths)
            do {
                let trashed = try trash.moveToTrash(row.localPath)
                // Checked, then moved by its name: a file saved over it in between (an editor's
                // or a sync tool's rename) went instead, and is put back.
                guard FileFingerprint.ofRegularFile(notFollowing: trashed.file) != now else {
                    Log.info("rule \(rule): moved \(row.localPath.display) to the trash (\(trashed.trash.display)): the server holds it")
                    return nil
                }
                do {
                    try trash.putBack(trashed, to: row.localPath)
                    kept = "it was replaced by another file just as it went to the trash; that file is back where it was"
                } catch {
                    Log.warning("rule \(rule): \(error.message); \(error.action)")
                    kept = "it was replaced by another file just as it went to the trash; that file is in the trash (\(trashed.file.display)): restore it from there"
                }
            } catch {
                if error.code == .notFound { return nil }
                kept = error.message
            }
        }
        Log.info("rule \(rule): \(row.localPath.display) stays: \(kept)")
        return kept
    }
}
