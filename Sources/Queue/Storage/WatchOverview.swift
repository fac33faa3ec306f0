import Platform

/// What `watch list` shows beside a rule's settings, derived from the rows.
public struct WatchOverview: Sendable, Equatable {
    /// Rows of this rule that are not moving, grouped by why.
    public struct Held: Sendable, Equatable {
        public var reason: Reason
        public var count: Int
    }

    /// Files taken for upload, and copies of content already taken that were not sent.
    public var taken = 0
    /// Files that were there when the rule was added, left alone.
    public var baseline = 0
    public var lastTaken: LocalPath?
    public var lastTakenAt: Int64?
    /// Uploads of this rule still queued, moving or retrying.
    public var pending = 0
    public var failed = 0
    public var held: [Held] = []
    /// Originals kept although the rule moves them to the trash, most recent first (at
    /// most `keptShown`), and how many there are in all.
    public var kept: [KeptOriginal] = []
    public var keptCount = 0
    public var status: WatchStatusRecord?

    public static let keptShown = 20

    public init() {}
}
