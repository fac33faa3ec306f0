import Platform

/// A file a rule took, with the upload it belongs to: its own, or for a copy, the one it
/// waits on.
public struct TakenRecord: Sendable, Equatable {
    /// Where the upload of a taken file stands: what decides about a later version of the file
    /// at the same path, and about another copy of its content.
    public enum Upload: Sendable, Equatable {
        /// Queued and never started: nothing of it is on the server, its row may take another
        /// version of the file.
        case waiting
        /// Running, or started before (an upload begun on the server, a retry pending): the
        /// upload's own checks see a change of the file.
        case started
        case completed(sha256: String?)
        case failed(ReasonCode?)
        /// Its row is gone (cancelled, cleared, its account removed).
        case gone
    }

    public var file: TakenFile
    /// Nil when there is no such upload (the baseline, a copy of content already sent).
    public var upload: Upload?

    public init(file: TakenFile, upload: Upload?) {
        self.file = file
        self.upload = upload
    }
}
