import Platform

/// A file of the tree that has settled but is held back, and why: shown by `watch list`
/// and `status`, so that a photo of an import that stalls half way is never held back
/// without a word.
public struct WaitingFile: Sendable, Equatable {
    public enum Why: Sendable, Equatable {
        /// A program has it open for writing (a copy, an import from a phone, a recording).
        case openForWriting
        /// It ends before its format says (a copy interrupted), and how.
        case notWhole(String)
    }

    public var path: LocalPath
    public var why: Why
    /// Since when it has waited, and when it is taken as it is if nothing changes
    /// (milliseconds since 1970).
    public var since: Int64
    public var until: Int64
}

extension WaitingFile.Why {
    /// For programs: `open_for_writing` or `not_whole`.
    public var code: String {
        switch self {
        case .openForWriting: "open_for_writing"
        case .notWhole: "not_whole"
        }
    }

    /// In words.
    public var words: String {
        switch self {
        case .openForWriting: "a program still has it open for writing (a copy or an import that has not finished?)"
        case .notWhole(let why): "it is not whole: \(why)"
        }
    }
}
