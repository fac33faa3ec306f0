import Glibc
import Platform
import Queue
import Transport

/// Settings a transfer runs with.
public struct TransferSettings: Sendable {
    /// The first chunk's size; later ones adapt to take about `chunkSeconds` each.
    public var chunkSize: Int64 = 16 * 1024 * 1024
    public var chunkSeconds: Double = 10
    public var maxChunkSize: Int64 = 512 * 1024 * 1024
    public var stallSeconds: Int = 30
    /// How often the agent writes the progress of running transfers to their rows.
    public var progressInterval: Double = 0.25
    /// Where the transfer counts its bytes for the agent to write (see `TransferProgress`):
    /// the agent gives each transfer it starts one of its own.
    public var progress: TransferProgress?
    /// How long a file that changed must stay untouched before it is sent again.
    public var settleSeconds: Double = ResumePolicy.settleSeconds
    /// The config's `ca_file`, trusted for every account that names none of its own.
    public var caFile: String?
    /// The config's `check_every_upload`: the server is asked about every file an upload
    /// made (one more request per file), not only where something relies on it.
    public var checkEveryUpload = false
    /// Something relies on this upload's file being on the server (its original goes to the
    /// trash): the agent sets it for each upload it starts.
    public var proofNeeded = false
    public init() {}
}

extension TransferSettings {
    /// The one setup of every HTTP session the program opens to an account's server (the
    /// agent's transfers and cancels, the CLI's checks): stall limit, cancellation flag, and
    /// the CA file trusted for that account, its own before the config's.
    public func prepare(_ session: HTTPSession, for account: Account, cancellation: CancellationFlag = CancellationFlag()) {
        session.cancellation = cancellation
        session.stallSeconds = stallSeconds
        session.caFile = account.caFile ?? caFile
    }
}
