import Platform

/// What the queue remembers for one watch rule: the folder its memory is about, and when
/// the files already there were set aside.
public struct WatchMemory: Sendable, Equatable {
    public var rule: String
    public var folder: LocalPath
    /// When the files already in the folder were recorded as the baseline; nil while that
    /// waits for the folder to be there, and for a rule that uploads them (`existing`).
    public var baselineAt: Int64?

    public init(rule: String, folder: LocalPath, baselineAt: Int64?) {
        self.rule = rule
        self.folder = folder
        self.baselineAt = baselineAt
    }
}
