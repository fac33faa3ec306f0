/// One way of getting a file's bytes into a server: tus, Nextcloud's chunked upload, a
/// plain WebDAV PUT. Each is a small type behind this interface; the policy above it
/// (fingerprints, checkpoints, asking before any restart, hashing once) is written once and
/// does not know which one it drives.
///
/// An upload on the server is named by a `handle`, an opaque string the queue keeps beside
/// the offset (a tus URL, a chunk folder). Each call is one or a few HTTP exchanges; errors
/// are thrown as they came (`HTTPStatusError`, `TransportError`, `ProtocolViolation`) for
/// the engine to classify. Not Sendable: an implementation owns an `HTTPSession`.
public protocol UploadProtocol: AnyObject {
    /// The session every request goes through, to set its cancellation, stall limit and CA file.
    var session: HTTPSession { get }

    /// What the server offers this protocol: size limit, checksums, how chunks are kept.
    func capabilities() throws -> UploadCapabilities

    /// Starts a new upload of `length` bytes that will become the file at `target`.
    func start(_ target: UploadTarget) throws -> UploadStanding.Started

    /// Where the server stands on an upload. Only this call may say that the server no
    /// longer has it (`.forgotten`); every other answer that is not a position throws.
    /// `confirmed` is what the server already confirmed (a whole PUT is held only when it
    /// was confirmed); a position behind it is reported as it is, and the upload policy
    /// goes back to it with a note, never quietly.
    func status(of handle: String, confirmed: Int64) throws -> UploadStanding

    /// Sends `body` (the bytes from `offset` on) of the upload that becomes `target`, and
    /// returns what the server confirmed, which may be less than was sent when the protocol
    /// keeps parts of a chunk. `checksum` is the body's digest in base64, when
    /// `capabilities` offered an algorithm.
    func send(_ body: RequestBody, to handle: String, at offset: Int64, of target: UploadTarget,
              checksum: (ChecksumAlgorithm, String)?) throws -> UploadStanding.Confirmed

    /// Makes a whole upload the file at its target (a no-op where the last chunk did that).
    /// `sha256` (hex) is the whole file's, for servers that store it beside the file.
    /// Never replaces a file: when one is at the target now, throws `NameTaken` and keeps
    /// the upload, so it can be finished under another name without sending it again.
    func finish(_ handle: String, as target: UploadTarget, sha256: String) throws

    /// The server's ETag of the file this upload made, as the reply of the request that made
    /// it (the last chunk, the PUT, the `MOVE`) named it; nil before, or when that reply named
    /// none. A listing made afterwards may already show another client's save at the name:
    /// only this reply names our version for certain.
    var madeETag: String? { get }

    /// Ends an upload on the server without creating the file; one already gone is fine.
    func abandon(_ handle: String) throws
}
