import Desktop
import Engine
import Platform
import Queue

/// Tells the person, once per batch, when items need them ("2 uploads need attention: …",
/// with a Retry button) and when a batch they sent by hand has arrived. Without a
/// notification service nothing breaks: the log says so once.
final class AgentNotifications: Sendable {
    let notifier: Notifier
    let queuePath: String
    /// Which rows each shown notification's Retry button retries.
    let retryable = Locked<[UInt32: [Int64]]>([:])

    init?(paths: XDGPaths, wake: @escaping @Sendable () -> Void) {
        guard let notifier = Notifier(environment: paths.environment) else { return nil }
        self.notifier = notifier
        self.queuePath = paths.queueDatabase
        let path = queuePath
        notifier.onAction = { [weak self] id, key in
            guard key == DesktopNotification.Action.retry.key,
                  let ids = self?.retryable.withLock({ $0.removeValue(forKey: id) }) else { return }
            do {
                let moved = try QueueStore(path: path).retry(ids)
                Log.info("retrying \(moved.count) item(s) from the notification")
                wake()
            } catch {
                Log.warning("could not retry from the notification: \(error)")
            }
        }
    }

    func attention(_ rows: [Transfer]) {
        let items = rows.map { row in
            AttentionBatch.Item(fileName: row.name, reason: row.reason?.message ?? "failed",
                                direction: row.direction == .upload ? .upload : .download,
                                canRetry: ![ReasonCode.sourceMissing, .notAFile, .rejectedByServer].contains(row.reason?.code ?? .protocol))
        }
        guard let batch = AttentionBatch(items), let id = notifier.notify(batch.notification) else { return }
        if batch.offersRetry { retryable.withLock { $0[id] = rows.map(\.id) } }
    }

    func done(_ summary: DoneByHand) {
        // A new version that went beside a changed server file is told on its own.
        for row in summary.conflictedCopies {
            let of = row.newVersionOf ?? row.remotePath
            notifier.notify(ConflictedCopy(name: String(of.split(separator: "/").last ?? ""), account: row.accountName, folder: row.remoteFolder,
                                           copyName: String(row.remotePath.split(separator: "/").last ?? "")).notification)
        }
        for place in summary.places {
            guard let batch = UploadedBatch(count: place.count, firstNames: place.firstNames, account: place.account, folder: place.folder)
            else { continue }
            notifier.notify(batch.notification)
        }
    }
}
