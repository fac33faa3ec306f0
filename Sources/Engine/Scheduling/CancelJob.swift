import Platform
import Queue
import Transport

/// Ends what a cancelled transfer leaves behind: its upload on the server (a tus DELETE,
/// Nextcloud's upload folder, a PUT's temporary: a courtesy, the server lets the first two
/// expire anyway), its `.part` here, and then its row.
///
/// Runs on a thread of its own. Stopped by the agent's shutdown before the server
/// answered, it leaves the row and its cancel request for the next agent.
public struct CancelJob {
    let id: Int64
    let settings: TransferSettings
    let cancellation: CancellationFlag

    init(id: Int64, settings: TransferSettings, cancellation: CancellationFlag) {
        self.id = id
        self.settings = settings
        self.cancellation = cancellation
    }

    func run(store: QueueStore, credentials: (Account) -> Credentials?) throws {
        guard let row = try store.transfer(id: id) else { return }
        if row.direction == .upload, let url = row.uploadURL, let account = try store.account(id: row.accountID) {
            if let password = credentials(account) {
                do {
                    let upload = try UploadJob.uploadProtocol(for: account, credentials: password, size: row.bytesTotal, handle: url)
                    settings.prepare(upload.session, for: account, cancellation: cancellation)
                    try upload.abandon(url)
                } catch {
                    if cancellation.isCancelled { return }
                    Log.info("\(row.name): could not end the upload on the server (\(error)); it expires there by itself")
                }
            } else {
                // Never unauthenticated: without the password the server keeps it until it expires.
                Log.info("\(row.name): the password cannot be read now, so the upload is left to expire on the server")
            }
        }
        Self.removeLocalLeftovers(of: row)
        try store.remove(row.id, by: .cancel)
        Log.info("cancelled \(row.name)")
    }

    /// Removes what a cancelled transfer left on this machine: a download's `.part`.
    public static func removeLocalLeftovers(of row: Transfer) {
        if row.direction == .download, row.state != .completed {
            DownloadJob.removePartial(of: row)
        }
    }
}
