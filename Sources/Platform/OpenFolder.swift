import Glibc

/// One folder, open: its identity, its entries one by one (`readdir`), and a look at each
/// entry relative to the open folder (`fstatat`, no path lookups). Closed once, when the
/// owner lets go.
///
/// Not Sendable: one thread reads it.
public final class OpenFolder {
    public let path: LocalPath
    /// The folder's device and inode, from the open descriptor.
    public let identity: FileIdentity
    private let stream: OpaquePointer

    /// One entry: its name's bytes, and its type as the folder says it (`DT_UNKNOWN` on
    /// file systems that do not say; `status(of:)` tells then).
    public struct Entry {
        public var name: [UInt8]
        public var type: UInt8
    }

    /// Opens `path` as a folder; a symbolic link is followed only with `followingLink`.
    public init(_ path: LocalPath, followingLink: Bool = true) throws(SystemError) {
        let fd = try FileIO.open(path, O_RDONLY | O_DIRECTORY | (followingLink ? 0 : O_NOFOLLOW))
        let st: stat
        do throws(SystemError) { st = try FileIO.status(fd, path: path) } catch {
            _ = try? FileIO.close(fd)
            throw error
        }
        guard let stream = fdopendir(fd) else {
            let error = SystemError("fdopendir", path: path.display)
            _ = try? FileIO.close(fd)
            throw error
        }
        self.path = path
        self.identity = FileIdentity(st)
        self.stream = stream
    }

    deinit { closedir(stream) }

    /// The next entry, `.` and `..` left out; nil at the end.
    public func next() throws(SystemError) -> Entry? {
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw SystemError("readdir", path: path.display) }
                return nil
            }
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            return Entry(name: name, type: entry.pointee.d_type)
        }
    }

    /// What the entry `name` is (fstatat relative to this folder, links not followed).
    public func status(of name: [UInt8]) throws(SystemError) -> stat {
        var st = stat()
        let fd = dirfd(stream)
        try valueOrErrno("stat", path: path.appending(LocalPath(bytes: name)).display) {
            LocalPath(bytes: name).withCString { fstatat(fd, $0, &st, AT_SYMLINK_NOFOLLOW) }
        }
        return st
    }
}
