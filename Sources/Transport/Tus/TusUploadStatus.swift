
/// Where the server stands on one upload, from HEAD.
public struct TusUploadStatus: Sendable, Equatable {
    public var offset: Int64
    public var length: Int64?
    /// `Upload-Expires`, in milliseconds since the epoch.
    public var expiresAt: Int64?
}
