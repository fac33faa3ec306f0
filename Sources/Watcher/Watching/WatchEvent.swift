import Platform

/// A file a watcher hands over: new to the caller, settled, and of a kind the rule takes.
public struct FoundFile: Sendable, Equatable {
    public var path: LocalPath
    /// The path below the watched folder, e.g. `2024/IMG_0001.jpg`.
    public var relativePath: LocalPath
    /// As it was when it settled; the caller records it with what it takes.
    public var fingerprint: FileFingerprint
    public var media: MediaInfo
    /// How it was noticed: an inotify event, or a scan (at start, after an overflow, in a
    /// new folder, or periodically while out of watches).
    public var noticedBy: NoticedBy

    public enum NoticedBy: String, Sendable, Equatable {
        case event, scan
    }
}

/// What a watcher tells its owner, on the watcher's own thread.
public enum WatchEvent: Sendable, Equatable {
    /// A new picture or video, ready to be queued.
    case found(FoundFile)
    /// A file (or a whole folder, `isFolder`) the caller took was renamed or moved within
    /// the watched folder: the same file, not a new one.
    case moved(from: LocalPath, to: LocalPath, isFolder: Bool)
    /// Something inside the tree could not be looked at (an unreadable folder or file).
    /// The rest of the tree is watched as usual.
    case problem(WatcherTrouble)
    /// The watcher's state or troubles changed.
    case status(WatcherStatus)
}

/// Where a watcher stands, for `watch list` and `status`.
public struct WatcherStatus: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        case starting
        /// Every folder of the tree has its watch.
        case watching
        /// Out of inotify watches: some of the tree is only scanned every `fallbackScanInterval`.
        case scanningPeriodically = "scanning_periodically"
        /// The folder is not there; waiting for it to come back.
        case folderMissing = "folder_missing"
        case stopped
    }

    public var state: State = .starting
    /// Why the state is not simply "watching"; empty when all is well.
    public var troubles: [WatcherTrouble] = []
    /// Folders with a watch now.
    public var watchedFolders = 0
    /// Candidates waiting for their settle window.
    public var settling = 0
    /// Times the kernel's event queue overflowed (each answered by a reconcile scan).
    public var overflows = 0
    /// Whole-tree scans done (at start, after an overflow, periodic, on request).
    public var scans = 0
    /// Files handed over as `found` since start.
    public var found = 0
    public var lastFound: LocalPath?

    public init() {}
}
