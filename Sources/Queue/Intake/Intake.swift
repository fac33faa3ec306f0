import Glibc
import Platform

/// Checks local files and writes them to the queue in one transaction, before any network
/// call. Below every front door: `upload`, `share-to` and the watcher share it. A bad file
/// never stops the good ones.
///
/// A folder is sent with its structure: every regular file inside it is queued under the
/// folder's name in the target (`Album/2024/a.jpg` → `/Photos/Album/2024/a.jpg`); the agent
/// creates the missing remote folders before each upload.
public enum Intake {
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public var path: LocalPath
        public var problem: String
        public var description: String { "\(path.display): \(problem)" }
        public init(path: LocalPath, problem: String) {
            self.path = path
            self.problem = problem
        }
    }

    /// A file that passed the checks, and where below the target folder it goes.
    public struct Selected: Sendable, Equatable {
        /// Absolute, as given or as found inside a given folder (links not resolved).
        public var path: LocalPath
        /// The remote path below the target, e.g. `["Album", "2024", "a.jpg"]`.
        public var relative: [String]
        public var fingerprint: FileFingerprint
    }

    /// What a set of paths amounts to: the files to send and the things refused.
    public struct Selection: Sendable {
        public var files: [Selected] = []
        public var refused: [Refusal] = []
        public init() {}
    }

    public struct Result: Sendable {
        public var ids: [Int64] = []
        public var refused: [Refusal] = []
        /// Files queued under another name than their own: names that are not UTF-8 text
        /// reach the server with U+FFFD in place of the bytes it cannot store.
        public var renamed: [Renamed] = []
    }

    /// A file that goes to the server as `remoteName`, not under its own name.
    public struct Renamed: Sendable, CustomStringConvertible {
        public var path: LocalPath
        public var remoteName: String
        public var description: String { "\(path.lastComponent.display) goes to the server as \(DisplayText.escape(remoteName))" }
    }

    /// Checks `paths`, walking into folders, without touching the queue.
    public static func select(_ paths: [LocalPath]) -> Selection {
        var selection = Selection()
        var walk = FolderWalk()
        for given in paths {
            let absolute = given.absolute()
            var st = stat()
            if absolute.withCString({ stat($0, &st) }) == 0, FileKind.of(mode: st.st_mode) == .directory {
                walk.walk(absolute, as: [folderName(absolute)], into: &selection)
                continue
            }
            switch check(given) {
            case .failure(let refusal): selection.refused.append(refusal)
            case .success(let fingerprint):
                selection.files.append(Selected(path: absolute, relative: [absolute.lastComponent.text], fingerprint: fingerprint))
            }
        }
        return selection
    }

    /// Queues everything in `selection` for upload into `remoteFolder`, in one transaction.
    public static func enqueue(_ selection: Selection, into remoteFolder: String, account: Account, origin: Origin,
                               ignoreRules: Bool = false, store: QueueStore) throws -> Result {
        let folder = RemotePath.normalize(remoteFolder)
        var renamed: [Renamed] = []
        let items = selection.files.map { file in
            if String(validating: file.path.lastComponent.bytes, as: UTF8.self) == nil {
                renamed.append(Renamed(path: file.path, remoteName: file.relative.last ?? file.path.lastComponent.text))
            }
            return NewTransfer(direction: .upload, origin: origin, accountID: account.id, localPath: file.path,
                               remotePath: RemotePath.join(folder, file.relative.joined(separator: "/")),
                               bytesTotal: file.fingerprint.size, fingerprint: file.fingerprint, ignoreRules: ignoreRules)
        }
        return Result(ids: try store.enqueue(items), refused: selection.refused, renamed: renamed)
    }

    /// Validates each of `files` (walking into folders) and queues the good ones for upload
    /// into `remoteFolder`.
    public static func enqueueUploads(_ files: [LocalPath], into remoteFolder: String, account: Account, origin: Origin,
                                      ignoreRules: Bool = false, store: QueueStore) throws -> Result {
        try enqueue(select(files), into: remoteFolder, account: account, origin: origin, ignoreRules: ignoreRules, store: store)
    }

    /// The name a given folder has on the server: its own, even when given as `.` or `..`.
    static func folderName(_ folder: LocalPath) -> String {
        let last = folder.lastComponent
        guard last.bytes == Array(".".utf8) || last.bytes == Array("..".utf8) || last.bytes == Array("/".utf8) else { return last.text }
        guard let resolved = folder.withCString({ realpath($0, nil) }) else { return last.text }
        defer { free(resolved) }
        let name = LocalPath(cString: resolved).lastComponent
        return name.bytes == Array("/".utf8) ? "" : name.text
    }

    /// Is this something we can upload? Regular, readable files only.
    public static func check(_ file: LocalPath) -> Swift.Result<FileFingerprint, Refusal> {
        checkedStatus(file).map(FileFingerprint.init)
    }

    /// As `check`, with the whole status of the file as opened: its change time as well.
    static func checkedStatus(_ file: LocalPath) -> Swift.Result<stat, Refusal> {
        var st = stat()
        if file.withCString({ stat($0, &st) }) != 0 {
            let e = errno
            var link = stat()
            switch e {
            case ENOENT where file.withCString({ lstat($0, &link) }) == 0:
                return .failure(Refusal(path: file, problem: "is a link to something that is not there (a broken link)"))
            case ENOENT: return .failure(Refusal(path: file, problem: "no such file; check the name"))
            case ELOOP: return .failure(Refusal(path: file, problem: "is a link that leads back to itself (a loop of links)"))
            case EACCES: return .failure(Refusal(path: file, problem: "permission denied; you cannot read it or a folder above it"))
            default: return .failure(Refusal(path: file, problem: String(cString: strerror(e))))
            }
        }
        switch FileKind.of(mode: st.st_mode) {
        case .regular: break
        case .directory: return .failure(Refusal(path: file, problem: "is a folder"))
        case .fifo: return .failure(Refusal(path: file, problem: "is a pipe (FIFO), not a file; it has no fixed contents to upload"))
        case .socket: return .failure(Refusal(path: file, problem: "is a socket, not a file; it has no contents to upload"))
        case .device: return .failure(Refusal(path: file, problem: "is a device, not a file; copy what you need from it into a file first"))
        case .other: return .failure(Refusal(path: file, problem: "is not a regular file"))
        }
        // Opening proves we can read it now; the agent reopens it per chunk later.
        let fd = file.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        if fd < 0 {
            let e = errno
            return .failure(Refusal(path: file, problem: LocalFileWords.unreadableFile(e)))
        }
        defer { close(fd) }
        var opened = stat()
        do { try valueOrErrno("fstat") { fstat(fd, &opened) } } catch {
            return .failure(Refusal(path: file, problem: error.reason))
        }
        return .success(opened)
    }
}
