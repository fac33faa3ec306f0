import Platform
import Queue
import Transport

/// Every decision an upload takes about where to go on, in one place: what the file says ×
/// what the row says × what the server says. Pure: the job gathers the facts, asks, and
/// does what it is told; the table in the tests is the whole policy.
///
/// The rules it keeps:
/// - a file that changed is never stitched into its old upload, and is not sent while it is
///   still being written (it waits until it has been still for `settleSeconds`, and
///   nobody holds it open for writing);
/// - an upload the row knows of is always asked about first: a stored expiry in the past
///   is a reason to ask, not to discard; only the server saying it no longer has the upload
///   starts one from zero;
/// - an upload the server holds whole is finished without sending a byte;
/// - a server that holds less than it confirmed (restored from a backup, or it lost its
///   last writes in a crash) is believed: the upload goes back to what it holds, with a
///   note, through the backoff, so a server that keeps doing it cannot make a loop.
public enum ResumePolicy {
    /// What the local file says, compared with the version the row recorded.
    public enum File: Sendable, Equatable {
        case unchanged
        /// Another version than the row recorded, last modified `stillFor` seconds ago.
        case changed(stillFor: Double)
        /// Another version than the row recorded, still open for writing: a save that paused
        /// longer than the settle time is not whole.
        case beingWritten
    }

    /// What the row says about the server's side.
    public enum Row: Sendable, Equatable {
        /// No upload on the server yet (or it was given up).
        case noUpload
        /// An upload handle, and whether the expiry the server gave for it has passed.
        case upload(expiryPassed: Bool)
    }

    /// What the server said about the row's upload, if it was asked yet.
    public enum Server: Sendable, Equatable {
        case notAsked
        case holds(offset: Int64, length: Int64?)
        case forgotten(expired: Bool)
    }

    public struct Facts: Sendable, Equatable {
        public var file: File
        public var row: Row
        public var server: Server
        /// The file's size now.
        public var size: Int64
        /// The offset the server last confirmed, as the row's checkpoint keeps it.
        public var confirmed: Int64

        public init(file: File, row: Row, server: Server = .notAsked, size: Int64, confirmed: Int64 = 0) {
            self.file = file; self.row = row; self.server = server; self.size = size; self.confirmed = confirmed
        }
    }

    public enum Step: Sendable, Equatable {
        /// The file is still being written: try again in `seconds`.
        case waitForFile(seconds: Double)
        /// Ask the server where the row's upload stands.
        case ask
        /// Give the server's upload up (`abandon`: end it there too) and start again from
        /// byte zero, through the backoff. The reason says why.
        case restart(Reason, abandon: Bool)
        /// Nothing on the server yet: look at the target, then start a new upload.
        case lookAtTarget
        /// The server holds less than it confirmed: keep `offset` as the checkpoint (the hash
        /// is rebuilt from the file's start) and go on from there after the backoff.
        case goBack(to: Int64, Reason)
        /// Send the file from `offset` on.
        case send(from: Int64)
        /// The server holds every byte: finish without sending any.
        case finish
    }

    /// The seconds a changed file must stay untouched before it is sent.
    public static let settleSeconds = Double(SettleWindow.seconds)

    public static func next(_ facts: Facts, settleSeconds: Double = settleSeconds) -> Step {
        if facts.file == .beingWritten { return .waitForFile(seconds: settleSeconds) }
        if case .changed(let stillFor) = facts.file {
            if stillFor < settleSeconds { return .waitForFile(seconds: settleSeconds - max(0, stillFor)) }
            if case .upload = facts.row { return .restart(Reason(.sourceChanged), abandon: true) }
            return .lookAtTarget
        }
        guard case .upload = facts.row else { return .lookAtTarget }
        switch facts.server {
        case .notAsked:
            return .ask
        case .forgotten(let expired):
            return .restart(Reason(expired ? .uploadExpired : .uploadLost), abandon: false)
        case .holds(let offset, let length):
            if let length, length != facts.size {
                return .restart(Reason(.uploadLost, "the server's upload is for \(length) bytes, the file has \(facts.size); started again"),
                                abandon: true)
            }
            if offset > facts.size {
                return .restart(Reason(.uploadLost, "the server holds \(offset) bytes of a \(facts.size)-byte file; started again"),
                                abandon: true)
            }
            if offset < facts.confirmed {
                return .goBack(to: offset, Reason(.uploadLost, "the server holds \(offset) bytes of the upload, fewer than the \(facts.confirmed) it had confirmed (it may have been restored from a backup); sending again from there"))
            }
            return offset == facts.size ? .finish : .send(from: offset)
        }
    }
}
