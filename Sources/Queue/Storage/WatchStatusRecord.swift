import Platform

/// How a rule's watcher stood when the agent last wrote it down.
public struct WatchStatusRecord: Sendable, Equatable {
    public var state: String
    /// The watcher's troubles as JSON, written and read by the watcher's side.
    public var troubles: String
    /// The files it holds back as JSON, written and read by the watcher's side.
    public var waiting: String
    public var watchedFolders: Int
    public var overflows: Int
    public var scans: Int
    public var at: Int64

    public init(state: String, troubles: String, waiting: String = "{}", watchedFolders: Int, overflows: Int, scans: Int,
                at: Int64 = nowMilliseconds()) {
        self.state = state; self.troubles = troubles; self.waiting = waiting; self.watchedFolders = watchedFolders
        self.overflows = overflows; self.scans = scans; self.at = at
    }
}
