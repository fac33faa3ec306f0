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
