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
