import Glibc

/// What identifies one version of a local file: if any of these change, it is another file.
///
/// Links: a path a person gave (`upload`, `share-to`, a download's own file) is followed, as
/// every program follows it, so the fingerprint is of the file they meant (`of(_:)`, or
/// `of(descriptor:)` once it is open). A watched folder's names are never followed
/// (`ofRegularFile(notFollowing:)`): a link put into a camera folder is not a new photo,
/// and following it could lead out of the folder. Walks through folders take the same
/// policy (`FolderTree.Links`).
public struct FileFingerprint: Hashable, Sendable, Codable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var mtimeNanoseconds: Int64

    public init(device: UInt64, inode: UInt64, size: Int64, mtimeNanoseconds: Int64) {
        self.device = device; self.inode = inode; self.size = size; self.mtimeNanoseconds = mtimeNanoseconds
    }

    /// The device and inode alone: the same file across a rename (and, since a deleted
    /// file's inode is handed to the next file made, not proof of it across a delete).
    public var identity: FileIdentity { FileIdentity(device: device, inode: inode) }

    /// The fingerprint `stat`, `lstat` or `fstatat` reported.
    public init(_ st: stat) {
        self.init(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                  mtimeNanoseconds: st.st_mtim.nanoseconds)
    }

    /// The fingerprint of an open file.
    public static func of(descriptor fd: Int32) throws(SystemError) -> FileFingerprint {
        var st = stat()
        try valueOrErrno("fstat") { fstat(fd, &st) }
        return FileFingerprint(st)
    }

    /// The fingerprint of the file at `path`, following links.
    public static func of(_ path: LocalPath) throws(SystemError) -> FileFingerprint {
        var st = stat()
        try valueOrErrno("stat", path: path.display) { path.withCString { stat($0, &st) } }
        return FileFingerprint(st)
    }

    /// The fingerprint of what is at `path` itself, if it is a regular file: nil for a
    /// link, a folder, anything else, or nothing there.
    public static func ofRegularFile(notFollowing path: LocalPath) -> FileFingerprint? {
        guard let st = try? FileIO.linkStatus(path), FileKind.of(mode: st.st_mode) == .regular else { return nil }
        return FileFingerprint(st)
    }
}

/// What kind of thing is at a path, for the checks before a file is queued.
public enum FileKind: Sendable, Equatable {
    case regular, directory, fifo, socket, device, other

    public static func of(mode: mode_t) -> FileKind {
        switch mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .directory
        case S_IFIFO: return .fifo
        case S_IFSOCK: return .socket
        case S_IFCHR, S_IFBLK: return .device
        default: return .other
        }
    }
}
