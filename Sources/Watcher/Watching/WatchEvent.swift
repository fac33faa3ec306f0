import Platform

/// A file a watcher hands over: new to the caller, settled, and of a kind the rule takes.
public struct FoundFile: Sendable, Equatable {
    public var path: LocalPath
    /// The path below the watched folder, e.g. `2024/IMG_0001.jpg`.
    public var relativePath: LocalPath
    /// As it was when it settled; the caller records it with what it takes.
    public var fingerprint: FileFingerprint
    /// What the picture or video is; nil from a watcher that takes every file.
    public var media: MediaInfo?
    /// How it was noticed: an inotify event, or a scan (at start, after an overflow, in a
    /// new folder, or periodically while out of watches).
    public var noticedBy: NoticedBy
    /// Why it is handed over as it is though it did not look finished: it stayed cut short,
    /// or a program kept it open for writing, for the whole wait (`unfinishedWait`), e.g.
    /// "taken as it was after 10 min, though it ends before the picture's end marker (a copy
    /// interrupted?): what is sent may be damaged". Nil
    /// for a file that looked finished.
    public var takenAsItIs: String?

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
    /// Two files the caller took, or two folders of the tree, swapped names in one step
    /// (`renameat2` with `RENAME_EXCHANGE`, `mv --exchange`): each is now at the other's
    /// name. Nothing in them is new, and neither replaced the other.
    case exchanged(LocalPath, LocalPath)
    /// A file or folder left its name without taking another in the tree: a file deleted (a
    /// folder deleted tells of its files one by one), or either moved out of the tree (to
    /// the trash) or to a name the watcher leaves out. Told of every one, taken or not; a
    /// new file may be made at the name a moment later (an editor saving by writing anew).
    case left(LocalPath)
    /// Something inside the tree could not be looked at (an unreadable folder or file).
    /// The rest of the tree is watched as usual.
    case problem(WatcherTrouble)
    /// A file that settled could not be read to decide about it: nothing was handed over.
    /// `FolderWatcher.reconsider` looks at it again.
    case notTaken(LocalPath, SystemError)
    /// The watcher's state or troubles changed.
    case status(WatcherStatus)
}
