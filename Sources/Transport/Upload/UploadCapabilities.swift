/// What a protocol can do on one server, asked once and remembered.
public struct UploadCapabilities: Sendable, Equatable {
    /// The largest file the server accepts, when it says.
    public var maxSize: Int64?
    /// The checksum sent with each chunk, when the server offers one this client has: tus
    /// checks it; Nextcloud stores the SHA-256 of a file sent in one PUT beside it.
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
