/// Why a row is not moving, or why it stopped: a code scripts can rely on, a message in
/// the person's words, and what they can do about it.
public struct Reason: Sendable, Equatable, Codable, CustomStringConvertible {
    public var code: ReasonCode
    public var message: String
    public var action: String
    /// The raw words behind the message (a library's error text, the server's reply), for
    /// `show`; never needed to understand what happened.
    public var detail: String?

    public init(_ code: ReasonCode, _ message: String? = nil, action: String? = nil, detail: String? = nil) {
        self.code = code
        self.message = message ?? code.defaultMessage
        self.action = action ?? code.defaultAction
        self.detail = detail
    }

    public var description: String { "\(message) (\(code.rawValue))" }

    /// A row held by the person's pause of the whole queue (`pause --all`), rather than its own.
    public static let queuePaused = Reason(.paused, action: "`instant-upload resume --all` lets the queue go on")
}

public enum ReasonCode: String, Sendable, Codable, CaseIterable {
    // Waiting, not failing.
    case offline, wifi, paused
    /// A watch rule that uploads only on mains power, while the machine runs on its battery.
    case battery
    /// The account's password cannot be read right now (keyring locked or not started).
    case credentials
    /// The disk holding the queue is full: nothing can be recorded, so nothing moves.
    case diskFull = "disk_full"
    // Transient: retried with backoff.
    /// The network is up but the server does not answer at its address (refused, no route,
    /// name not found): unlike `offline`, nothing on this computer is waiting.
    case unreachable
    case timeout
    case connectionReset = "connection_reset"
    case serverError = "server_error"
    case serverBusy = "server_busy"
    case maintenance
    case checksumMismatch = "checksum_mismatch"
    /// The queue database could not be written for a moment (locked by another program, an I/O error).
    case queueDatabase = "queue_database"
    // Permanent: failed at once, never retried by itself.
    case auth
    case rejectedByServer = "rejected_by_server"
    case targetMissing = "target_missing"
    case sourceMissing = "source_missing"
    case sourceUnreadable = "source_unreadable"
    case tooLarge = "too_large"
    case quota
    case `protocol`
    case integrity
    case notAFile = "not_a_file"
    case tls
    case localWrite = "local_write"
    // Notes on a row that started again, shown while it waits.
    case sourceChanged = "source_changed"
    case uploadExpired = "upload_expired"
    case uploadLost = "upload_lost"
    // Transient too (declared last: the codes' order is kept for what lists them by it).
    /// This computer had no thread (or the memory for one) to run the transfer on.
    case noResources = "no_resources"
    // Waiting too (declared last for the same reason).
    /// The folder of the watch rule that found the file is not there (a card taken out, a
    /// disk unmounted, the folder moved away): the file goes when the folder is back.
    case folderMissing = "folder_missing"

    /// Transient reasons put a row in `retrying`; the others in `failed`.
    public var isTransient: Bool {
        switch self {
        case .offline, .wifi, .paused, .battery, .credentials, .diskFull, .unreachable, .timeout, .connectionReset, .serverError,
             .serverBusy, .maintenance, .checksumMismatch, .queueDatabase, .noResources, .sourceChanged, .uploadExpired, .uploadLost,
             .folderMissing:
            return true
        default:
            return false
        }
    }

    public var defaultMessage: String {
        switch self {
        case .offline: "waiting for network"
        case .wifi: "waiting for Wi-Fi"
        case .paused: "paused by you"
        case .battery: "waiting for mains power"
        case .credentials: "waiting for the password: the keyring is locked or not running yet"
        case .diskFull: "the disk is full"
        case .unreachable: "cannot reach the server"
        case .timeout: "the server stopped answering"
        case .connectionReset: "the connection dropped"
        case .serverError: "the server had an internal error"
        case .serverBusy: "the server is busy"
        case .maintenance: "the server is in maintenance mode"
        case .checksumMismatch: "a chunk arrived damaged and is sent again"
        case .queueDatabase: "the queue database could not be written for a moment"
        case .noResources: "this computer had no memory or threads to spare to start it"
        case .folderMissing: "the file's folder is not there (a card taken out?)"
        case .auth: "the server did not accept the password"
        case .rejectedByServer: "the server refused the file"
        case .targetMissing: "the folder on the server no longer exists"
        case .sourceMissing: "the file is gone from this computer"
        case .sourceUnreadable: "the file cannot be read"
        case .tooLarge: "the file is larger than the server accepts"
        case .quota: "no quota left on server"
        case .protocol: "the server answered something this program does not understand"
        case .integrity: "the server's copy does not match the file"
        case .notAFile: "this is not a file"
        case .tls: "the server's certificate could not be verified"
        case .localWrite: "the download cannot be written here"
        case .sourceChanged: "changed while uploading, started again"
        case .uploadExpired: "the server forgot the partial upload, started again"
        case .uploadLost: "the server no longer has the partial upload, started again"
        }
    }

    public var defaultAction: String {
        switch self {
        case .offline: "it resumes when the network returns"
        case .wifi: "it starts on Wi-Fi; `instant-upload retry --now ID` sends it anyway"
        case .paused: "`instant-upload resume ID` lets it go on from where it stopped"
        case .battery: "it starts when the computer is plugged in; `instant-upload retry --now ID` sends it anyway"
        case .credentials: "unlock your keyring (log in to the desktop); it starts by itself then"
        case .diskFull: "free some space on the disk; it continues by itself"
        case .timeout, .connectionReset, .serverError, .serverBusy, .maintenance, .checksumMismatch, .queueDatabase,
             .sourceChanged, .uploadExpired, .uploadLost:
            "nothing: it is retried by itself"
        case .noResources: "nothing: it is retried by itself; if it lasts, close some programs"
        case .folderMissing: "it goes by itself when the folder is back (the card inserted, the disk mounted); `instant-upload cancel ID` discards it"
        case .unreachable: "nothing: it is retried by itself; if it lasts, check the address and that the server is running"
        case .auth: "log in again: `instant-upload account add` with the new password, then `instant-upload retry ID`"
        case .rejectedByServer: "discard it: `instant-upload cancel ID`"
        case .targetMissing: "choose a new folder: `instant-upload retry ID --to DIR`"
        case .sourceMissing: "discard it: `instant-upload cancel ID`"
        case .sourceUnreadable: "fix the file's permissions, then `instant-upload retry ID`"
        case .tooLarge: "discard it, or raise the server's limit and retry"
        case .quota: "free space on the server, then `instant-upload retry ID`"
        case .protocol: "check the server address, then `instant-upload retry ID`"
        case .integrity: "`instant-upload retry ID` sends it again; the file here is untouched"
        case .notAFile: "discard it: `instant-upload cancel ID`"
        case .tls: "check the server address; if the server uses a private certificate authority, set ca_file in the config"
        case .localWrite: "free space or fix permissions in the download folder, then `instant-upload retry ID`"
        }
    }
}
