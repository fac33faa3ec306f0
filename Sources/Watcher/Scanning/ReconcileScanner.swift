import Glibc
import Platform

/// A walk over a watched tree that hands over the regular files the caller does not know.
///
/// Made for "nothing new" to be cheap: one `readdir` per folder, one `fstatat` per file
/// relative to the open folder (no path lookups), and a question to `isKnown` keyed by
/// fingerprint and path. Symbolic links are never followed (but the root may be one),
/// hidden and temporary names are skipped, a folder reached twice (a bind mount of a
/// parent) is walked once, and a folder that cannot be read is reported, not fatal.
public struct ReconcileScanner: Sendable {
    public let root: LocalPath
    /// Folders deeper than this below the root are not entered.
    public var maximumDepth = 64
    /// Whether the root may be a symbolic link to the folder (a rule's folder may; a
    /// subfolder the watcher walks on its own may not).
    public var followsRootLink = true

    public init(root: LocalPath) { self.root = root }

    /// A regular file the caller did not know.
    public struct File: Sendable, Equatable {
        public var path: LocalPath
        public var fingerprint: FileFingerprint
    }

    /// A folder or file the walk could not look at, and why.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public var path: LocalPath
        public var error: SystemError
        public var description: String {
            error.errno == EACCES ? "\(path.display): permission denied; this folder is skipped until you can read it"
                : "\(path.display): \(error.reason)"
        }
    }

    public struct Summary: Sendable, Equatable {
        public var folders = 0
        /// Regular files seen, known or not.
        public var files = 0
        public var newFiles = 0
        public var problems: [Problem] = []
        /// Set when the root itself could not be opened (missing, not a folder, unreadable).
        public var rootError: SystemError?
    }

    /// Walks the tree depth first. `enteringFolder` runs for each folder before its entries
    /// are read, so a watch placed there misses nothing the listing does not show;
    /// `isKnown` is asked for every regular file; `onNew` gets those it does not know.
    @discardableResult
    public func scan(enteringFolder: (LocalPath) -> Void = { _ in },
                     isKnown: (FileFingerprint, LocalPath) -> Bool,
                     onNew: (File) -> Void) -> Summary {
        var summary = Summary()
        var visited = Set<FolderIdentity>()
        var stack: [(LocalPath, Int)] = [(root, 0)]
        while let (folder, depth) = stack.popLast() {
            let isRoot = depth == 0
            // The root may be a symbolic link to the real folder; nothing below it is followed.
            let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (isRoot && followsRootLink ? 0 : O_NOFOLLOW)
            let fd = folder.withCString { open($0, flags) }
            if fd < 0 {
                let error = SystemError("open", path: folder.display)
                if isRoot { summary.rootError = error } else if ![ENOENT, ELOOP, ENOTDIR].contains(error.errno) {
                    summary.problems.append(Problem(path: folder, error: error))
                }
                continue
            }
            var st = stat()
            guard fstat(fd, &st) == 0, visited.insert(FolderIdentity(st)).inserted else { close(fd); continue }
            summary.folders += 1
            enteringFolder(folder)
            guard let directory = fdopendir(fd) else {
                summary.problems.append(Problem(path: folder, error: SystemError("fdopendir", path: folder.display)))
                close(fd)
                continue
            }
            defer { closedir(directory) }
            while true {
                errno = 0
                guard let entry = readdir(directory) else {
                    if errno != 0 { summary.problems.append(Problem(path: folder, error: SystemError("readdir", path: folder.display))) }
                    break
                }
                let name = Self.name(of: entry)
                // `.` and `..` first, on their own: entering them would walk the whole disk.
                if name == [0x2E] || name == [0x2E, 0x2E] { continue }
                guard !IgnoredNames.isIgnored(name) else { continue }
                var type = entry.pointee.d_type
                var entryStat = stat()
                var haveStat = false
                if type == UInt8(DT_UNKNOWN) || type == UInt8(DT_REG) {
                    // Some file systems leave d_type unknown; the file's own stat says what it is.
                    let rc = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                        pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                            fstatat(fd, $0, &entryStat, AT_SYMLINK_NOFOLLOW)
                        }
                    }
                    if rc != 0 {
                        let error = SystemError("stat", path: folder.appending(LocalPath(bytes: name)).display)
                        if error.errno != ENOENT { summary.problems.append(Problem(path: folder.appending(LocalPath(bytes: name)), error: error)) }
                        continue
                    }
                    haveStat = true
                    switch FileKind.of(mode: entryStat.st_mode) {
                    case .regular: type = UInt8(DT_REG)
                    case .directory: type = UInt8(DT_DIR)
                    default: continue
                    }
                }
                let path = folder.appending(LocalPath(bytes: name))
                if type == UInt8(DT_DIR) {
                    if depth < maximumDepth { stack.append((path, depth + 1)) }
                } else if type == UInt8(DT_REG), haveStat {
                    summary.files += 1
                    let fingerprint = FileFingerprint(entryStat)
                    if !isKnown(fingerprint, path) {
                        summary.newFiles += 1
                        onNew(File(path: path, fingerprint: fingerprint))
                    }
                }
            }
        }
        return summary
    }

    private static func name(of entry: UnsafeMutablePointer<dirent>) -> [UInt8] {
        withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
    }
}

/// A folder's device and inode: what makes it the same folder under two paths.
struct FolderIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64

    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }
}
