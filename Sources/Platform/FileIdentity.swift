import Glibc

/// A file's or folder's device and inode: what makes it the same one under two paths (a
/// symbolic link, a `..`, a bind mount), and another one under the same path once it was
/// replaced.
public struct FileIdentity: Hashable, Sendable, CustomStringConvertible {
    public var device: UInt64
    public var inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The identity `stat`, `lstat`, `fstat` or `fstatat` reported.
    public init(_ st: stat) {
        self.init(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// The identity of what `path` leads to (links followed).
    public static func of(_ path: LocalPath) throws(SystemError) -> FileIdentity {
        FileIdentity(try FileIO.status(path))
    }

    public var description: String { "device \(device), inode \(inode)" }
}
