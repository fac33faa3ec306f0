import Glibc
import Platform
import Queue
import Transport

/// Fetches one remote file into `Local Drive/`, resuming a `.part` with Range.
final class DownloadJob {
    let transfer: Transfer
    let account: Account
    let store: QueueStore
    let settings: TransferSettings
    let downloads: String
    let cancellation: CancellationFlag
    let credentials: Credentials?

    init(transfer: Transfer, account: Account, credentials: Credentials?, store: QueueStore, settings: TransferSettings,
         downloads: String, cancellation: CancellationFlag) {
        self.transfer = transfer; self.account = account; self.credentials = credentials; self.store = store
        self.settings = settings; self.downloads = downloads; self.cancellation = cancellation
    }

    func run() -> JobOutcome {
        .failed(Reason(.protocol, "downloads are not available yet"))
    }

    static func removePartial(of row: Transfer) {
        guard !row.localPath.bytes.isEmpty else { return }
        let part = LocalPath(bytes: row.localPath.bytes + Array(".part".utf8))
        _ = part.withCString { unlink($0) }
    }
}
