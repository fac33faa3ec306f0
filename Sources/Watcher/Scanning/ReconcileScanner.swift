import Glibc
import Platform

/// A walk over a watched tree that hands over the regular files the caller does not know.
///
/// Made for "nothing new" to be cheap: the program's one tree walk (`FolderTree`: one
/// `readdir` per folder, one `fstatat` per file relative to the open folder) and a question
/// to `isKnown` keyed by fingerprint and path. Symbolic links are never followed (but the
/// root may be one), hidden and temporary names are skipped, a folder reached twice (a bind
/// mount of a parent) is walked once, and a folder that cannot be read is reported, not fatal.
public struct ReconcileScanner: Sendable {
    public let root: LocalPath
    /// Folders deeper than this below the root are not entered.
    public var maximumDepth = 64
    /// Whether the root may be a symbolic link to the folder (a rule's folder may; a
    /// subfolder the watcher walks on its own may not).
    public var followsRootLink = true
    /// What the owner took: a file it remembers is looked at whatever its name.
    public var remembered: (any TakenFiles)?

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
        /// A folder that could not be listed, or a name in one that could not be looked at.
        public var isFolder = true
        public var description: String {
            let words = isFolder ? LocalFileWords.unlistableFolder(error.errno) : LocalFileWords.unreadableFile(error.errno)
            return "\(path.display): " + words + "; skipped until it can be"
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
        var tree = FolderTree(links: .skipped)
        tree.followsRootLink = followsRootLink
        tree.maximumDepth = maximumDepth
        let remembered = remembered
        tree.skips = { folder, name in IgnoredNames.isIgnored(name, in: folder, remembered: remembered) }
        tree.walk(root) { event in
            switch event {
            case .folder(let path, _):
                summary.folders += 1
                enteringFolder(path)
            case .entry(let path, let status, _):
                guard FileKind.of(mode: status.st_mode) == .regular else { return }
                summary.files += 1
                let fingerprint = FileFingerprint(status)
                if !isKnown(fingerprint, path) {
                    summary.newFiles += 1
                    onNew(File(path: path, fingerprint: fingerprint))
                }
            case .problem(let path, let error, isFolder: true, let depth):
                if depth == 0 && summary.folders == 0 {
                    summary.rootError = error
                } else if ![ENOENT, ELOOP, ENOTDIR].contains(error.errno) {
                    // A folder gone or replaced meanwhile is no problem; the watch sees it.
                    summary.problems.append(Problem(path: path, error: error))
                }
            case .problem(let path, let error, isFolder: false, _):
                if error.errno != ENOENT { summary.problems.append(Problem(path: path, error: error, isFolder: false)) }
            case .repeated, .tooDeep:
                break
            }
        }
        return summary
    }
}
