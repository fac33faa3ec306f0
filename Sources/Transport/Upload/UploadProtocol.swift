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

    /// Ends an upload on the server without creating the file; one already gone is fine.
    func abandon(_ handle: String) throws
}

/// What a protocol can do on one server, asked once and remembered.
public struct UploadCapabilities: Sendable, Equatable {
    /// The largest file the server accepts, when it says.
    public var maxSize: Int64?
    /// The checksum the server checks per chunk, when it offers one this client has.
    public var chunkChecksum: ChecksumAlgorithm?
    /// True when a chunk broken off midway may leave part of itself on the server, so the
    /// confirmed offset can land anywhere; false when a chunk is kept whole or not at all.
    public var keepsPartialChunks: Bool
    /// True when the whole file must go in one request (plain PUT): nothing survives a break.
    public var wholeFileOnly: Bool
    /// Which request makes the file appear under its name.
    public var finalStep: FinalStep
    /// Every chunk but the last must be at least this long (Nextcloud: 5 MiB).
    public var minChunkSize: Int64?
    /// No chunk may be longer than this (the server says so, or refuses it).
    public var maxChunkSize: Int64?
    /// A file may be sent in at most this many chunks (Nextcloud: 10,000).
    public var maxChunkCount: Int64?

    public init(maxSize: Int64? = nil, chunkChecksum: ChecksumAlgorithm? = nil, keepsPartialChunks: Bool = true,
                wholeFileOnly: Bool = false, finalStep: FinalStep = .finish, minChunkSize: Int64? = nil,
                maxChunkSize: Int64? = nil, maxChunkCount: Int64? = nil) {
        self.maxSize = maxSize; self.chunkChecksum = chunkChecksum
        self.keepsPartialChunks = keepsPartialChunks; self.wholeFileOnly = wholeFileOnly
        self.finalStep = finalStep; self.minChunkSize = minChunkSize
        self.maxChunkSize = maxChunkSize; self.maxChunkCount = maxChunkCount
    }
}

/// The request that makes an uploaded file appear under its name, which decides how the
/// job keeps the promise that nothing on the server is replaced.
public enum FinalStep: Sendable, Equatable {
    /// The chunk that reaches the length (tus). tus has no conditional form of it, so the
    /// target is looked at again just before that chunk, which is held back to one byte.
    case lastChunk
    /// `finish`, a conditional request of its own (Nextcloud's `MOVE .file`, a temporary's
    /// `MOVE`, both with `Overwrite: F`): a name taken meanwhile costs no byte sent again.
    case finish
    /// The one request that sends the whole file (a direct `PUT` with `If-None-Match: *`).
    case wholeFileSend
}

/// The request that would make the file found another file at its name (`412` to a
/// conditional `MOVE` or `PUT`): nothing was replaced, and the upload is still there.
public struct NameTaken: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name that is taken, absolute within the account.
    public var path: String
    public init(path: String) { self.path = path }
    public var description: String { "\(path) is taken on the server" }
}

/// What a request that makes a file may find at its name, and replace.
public enum Replacing: Sendable, Equatable {
    /// Nothing: a file there makes the server refuse (`NameTaken`).
    case nothing
    /// The version with this ETag, and no other (`VersionChanged`): a new version of a file.
    case version(etag: String)

    /// The headers that make a `PUT` conditional on it.
    var putHeaders: [(String, String)] {
        switch self {
        case .nothing: [("If-None-Match", "*")]
        case .version(let etag): [("If-Match", Self.entityTag(etag))]
        }
    }

    /// An ETag as a condition carries it: quoted (some servers list theirs without the
    /// quotes, as wsgidav's `getetag`), and strong: Apache calls a file's ETag weak while it
    /// is less than a second old and strong after, for the same version.
    static func entityTag(_ etag: String) -> String {
        "\"" + opaque(etag) + "\""
    }

    /// The opaque part of an ETag (no `W/`, no quotes).
    static func opaque(_ etag: String) -> String {
        var text = Substring(etag.trimmingCharacters(in: .whitespaces))
        if text.hasPrefix("W/") { text = text.dropFirst(2) }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
        return String(text)
    }

    /// Whether two ETags name the same version, compared weakly (RFC 9110 §8.8.3.2).
    public static func sameVersion(_ a: String, _ b: String) -> Bool { opaque(a) == opaque(b) }

    /// The headers that make a `MOVE` to `destination` (a URL) conditional on it: `Overwrite: F`,
    /// or a tagged `If` list naming the destination's ETag (RFC 4918 §10.4).
    func moveHeaders(destination: String) -> [(String, String)] {
        switch self {
        case .nothing: [("Overwrite", "F")]
        case .version(let etag): [("Overwrite", "T"), ("If", "<\(destination)> ([\(Self.entityTag(etag))])")]
        }
    }

    /// What a `412` to such a request means.
    func refusal(at path: String) -> Error {
        switch self {
        case .nothing: NameTaken(path: path)
        case .version(let etag): VersionChanged(path: path, etag: etag)
        }
    }
}

/// The request that would replace a file with its new version found another version there
/// (`412` to `If-Match` or a tagged `If`): someone changed it on the server meanwhile.
public struct VersionChanged: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    /// The version the upload was to replace.
    public var etag: String
    public init(path: String, etag: String) { self.path = path; self.etag = etag }
    public var description: String { "\(path) on the server is no longer the version \(etag)" }
}

/// The file an upload becomes on the server.
public struct UploadTarget: Sendable, Equatable {
    /// Absolute within the account, e.g. `/Photos/IMG_0042.jpg`.
    public var remotePath: String
    public var length: Int64
    public var contentType: String
    /// The local file's modification time in seconds since the epoch, for servers that set
    /// the file's from it (`X-OC-Mtime`).
    public var mtime: Int64?
    /// What the request that makes the file may find at `remotePath`.
    public var replacing: Replacing

    public init(remotePath: String, length: Int64, contentType: String, mtime: Int64? = nil, replacing: Replacing = .nothing) {
        self.remotePath = remotePath; self.length = length; self.contentType = contentType; self.mtime = mtime
        self.replacing = replacing
    }

    /// The last component of `remotePath`.
    public var name: String { String(remotePath.split(separator: "/").last ?? "") }
}

/// What the server says about one upload.
public enum UploadStanding: Sendable, Equatable {
    /// It holds the first `offset` bytes of an upload `length` bytes long (when it says).
    case holds(offset: Int64, length: Int64?, expiresAt: Int64?)
    /// It no longer has the upload: 404, or 410 (`expired`) for tus.
    case forgotten(expired: Bool)

    /// A new upload: its handle, and until when the server keeps it unfinished.
    public struct Started: Sendable, Equatable {
        public var handle: String
        /// Milliseconds since the epoch.
        public var expiresAt: Int64?
        public init(handle: String, expiresAt: Int64?) { self.handle = handle; self.expiresAt = expiresAt }
    }

    /// A chunk the server took: the offset it now holds, and its latest expiry.
    public struct Confirmed: Sendable, Equatable {
        public var offset: Int64
        /// Milliseconds since the epoch.
        public var expiresAt: Int64?
        public init(offset: Int64, expiresAt: Int64?) { self.offset = offset; self.expiresAt = expiresAt }
    }
}
