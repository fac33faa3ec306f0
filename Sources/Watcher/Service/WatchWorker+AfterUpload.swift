import Platform
import Queue

/// `after_upload = trash`: the original goes to the person's trash once its upload is
/// complete, and only if it is still the very file that was uploaded.
extension WatchWorker {
    /// An upload of a rule completed.
    func afterUpload(_ row: Transfer, store: QueueStore) throws {
        guard let id = row.watchRule, row.origin == .auto, row.direction == .upload else { return }
        if rules.first(where: { $0.id == id })?.afterUpload == .trash { try moveToTrash(upload: row.id, rule: id, store: store) }
        try store.markAfterUploadDone(transferID: row.id)
    }

    /// Uploads that completed while the agent was stopping, before their original was
    /// dealt with.
    func finishAfterUploads(of rule: WatchRule, store: QueueStore) throws {
        for transferID in try store.uploadsAwaitingAfterStep(rule: rule.id) {
            if rule.afterUpload == .trash { try moveToTrash(upload: transferID, rule: rule.id, store: store) }
            try store.markAfterUploadDone(transferID: transferID)
        }
    }

    private func moveToTrash(upload transferID: Int64, rule: String, store: QueueStore) throws {
        // The row as it stands now (the file may have been renamed since it was queued);
        // a row cleared meanwhile leaves the file where it is.
        guard let row = try store.transfer(id: transferID), row.state == .completed, row.sha256 != nil,
              let uploaded = row.fingerprint else { return }
        guard WatchLoop.fingerprint(row.localPath) == uploaded else {
            Log.info("rule \(rule): \(row.localPath.display) stays: it is not the file that was uploaded any more (changed, replaced or gone)")
            return
        }
        do {
            let trashed = try Trash(paths: options.paths).moveToTrash(row.localPath)
            Log.info("rule \(rule): moved \(row.localPath.display) to the trash (\(trashed.trash.display)): its upload is complete")
        } catch {
            Log.warning("rule \(rule): \(error)")
        }
    }
}
