import FoundationEssentials
import Platform

/// A file a rule's watcher holds back (see `WaitingFile`), as `watch list` and `status`
/// show it. Stored as JSON with the rule's status in the queue database.
public struct HeldBackFile: Codable, Sendable, Equatable {
    /// `open_for_writing` or `not_whole`.
    public var code: String
    /// The file, as text for people (odd bytes escaped).
    public var path: String
    /// Why, in words.
    public var message: String
    /// Since when it has waited, and when it is taken as it is if nothing changes
    /// (milliseconds since 1970).
    public var since: Int64
    public var until: Int64

    public init(code: String, path: String, message: String, since: Int64, until: Int64) {
        self.code = code; self.path = path; self.message = message; self.since = since; self.until = until
    }

    init(_ file: WaitingFile) {
        self.init(code: file.why.code, path: file.path.display, message: file.why.words, since: file.since, until: file.until)
    }

    /// What becomes of it, `time` being `until` as people read it.
    public func outcome(at time: String) -> String {
        code == WaitingFile.Why.openForWriting.code ? "it is taken once it is closed, or as it is at \(time) if it stays unchanged until then"
            : "it is taken once it is whole, or as it is at \(time) if it stays so until then"
    }
}

/// The files a rule's watcher holds back, as stored: the first few by path, and how many
/// there are in all.
public struct HeldBack: Codable, Sendable, Equatable {
    public var count = 0
    public var files: [HeldBackFile] = []

    public init() {}

    init(_ waiting: [WaitingFile]) {
        count = waiting.count
        files = waiting.prefix(RuleTrouble.shownFiles).map(HeldBackFile.init)
    }

    var encoded: String { (try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}" }

    /// As stored; an unreadable value reads as none.
    public static func decode(_ text: String) -> HeldBack {
        (try? JSONDecoder().decode(HeldBack.self, from: Data(text.utf8))) ?? HeldBack()
    }
}
