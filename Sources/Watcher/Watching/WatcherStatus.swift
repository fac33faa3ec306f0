import Platform

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
    /// Nothing more is on its way from the tree: it was walked, no file settles, no move
    /// waits for its pair and no walk is due. False until the first walk is done.
    public var quiet = false
    /// Files settled but held back (still open for writing, not whole), by path.
    public var waiting: [WaitingFile] = []
    /// Times the kernel's event queue overflowed (each answered by a reconcile scan).
    public var overflows = 0
    /// Whole-tree scans done (at start, after an overflow, periodic, on request).
    public var scans = 0
    /// Files handed over as `found` since start.
    public var found = 0
    public var lastFound: LocalPath?

    public init() {}
}
