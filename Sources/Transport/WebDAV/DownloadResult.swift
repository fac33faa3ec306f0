/// How one download request ended, when the server answered with the file.
public struct DownloadResult: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// 206: the server sent the bytes from the requested offset on, and they follow the
        /// ones that were already in the file.
        case resumed
        /// 200: the server sent the whole file, and the file now holds only these bytes, from
        /// 0. When a resume was asked for, the file changed on the server (the `If-Range`
        /// ETag no longer matched) or the server does not do ranges.
        case wholeFile
    }

    public var kind: Kind
    /// The offset the caller asked to resume from.
    public var requestedOffset: Int64
    /// Body bytes this request added to the file.
    public var receivedBytes: Int64
    /// Bytes the file holds now.
    public var fileSize: Int64
    /// The size of the whole file on the server (from `Content-Range` or `Content-Length`).
    public var totalSize: Int64?
    /// The ETag of what was downloaded, in header form (quotes included).
    public var etag: String?
    public var contentType: String?

    public init(kind: Kind, requestedOffset: Int64, receivedBytes: Int64, fileSize: Int64, totalSize: Int64?,
                etag: String?, contentType: String? = nil) {
        self.kind = kind; self.requestedOffset = requestedOffset; self.receivedBytes = receivedBytes
        self.fileSize = fileSize; self.totalSize = totalSize; self.etag = etag; self.contentType = contentType
    }

    /// A resume was asked for and the server sent the whole file instead: whatever the
    /// caller derived from the first `requestedOffset` bytes (a running hash) is stale.
    public var startedOver: Bool { kind == .wholeFile && requestedOffset > 0 }

    /// The file holds every byte the server has: as many as the reply said the whole file
    /// has, or, where it left that unsaid (a 206's `bytes N-M/*`), as many as `listed` (the
    /// size the server listed for this file; true when neither says).
    public func isComplete(listed: Int64?) -> Bool { (totalSize ?? listed).map { $0 == fileSize } ?? true }
}
