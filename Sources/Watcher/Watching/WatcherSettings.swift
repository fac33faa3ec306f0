import Platform

/// How one folder is watched.
public struct WatcherSettings: Sendable, Equatable {
    public var folder: LocalPath
    /// The pictures and videos taken; nil takes every regular file (Local Drive), unread.
    public var media: MediaSelection?
    /// How long a candidate's size and mtime must hold still before it is taken.
    public var settleWindow: Duration
    /// How long a file that looks unfinished waits before it is taken as it is: a picture
    /// or video that ends before its format says it does, once closed (a copy interrupted,
    /// see `MediaCompleteness`; a damaged photo is still backed up), or a file a program
    /// keeps open for writing without changing it, if it looks whole.
    public var unfinishedWait: Duration
    /// How often a tree that could not get all its watches is scanned instead.
    public var fallbackScanInterval: Duration
    /// Watched for mounts and unmounts; nil to not watch it.
    public var mountTable: String?

    public init(folder: LocalPath, media: MediaSelection? = .all, settleWindow: Duration = .seconds(SettleWindow.seconds),
                unfinishedWait: Duration = .seconds(600), fallbackScanInterval: Duration = .seconds(300),
                mountTable: String? = "/proc/self/mountinfo") {
        self.folder = folder
        self.media = media
        self.settleWindow = settleWindow
        self.unfinishedWait = unfinishedWait
        self.fallbackScanInterval = fallbackScanInterval
        self.mountTable = mountTable
    }
}
