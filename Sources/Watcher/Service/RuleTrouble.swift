import FoundationEssentials
import Platform

/// Something that keeps a rule from doing its whole job, as `watch list` and `status`
/// show it: the watcher's own troubles and the rule's (no such account, a broken config).
/// Stored as JSON with the rule's status in the queue database.
public struct RuleTrouble: Codable, Sendable, Equatable, CustomStringConvertible {
    /// A `WatcherTrouble.Code`, or one of the rule's own below.
    public var code: String
    public var message: String
    public var action: String
    /// The path concerned, as text for people (odd bytes escaped).
    public var path: String?

    public init(code: String, message: String, action: String, path: String? = nil) {
        self.code = code; self.message = message; self.action = action; self.path = path
    }

    public init(_ trouble: WatcherTrouble) {
        self.init(code: trouble.code.rawValue, message: trouble.message, action: trouble.action, path: trouble.path?.display)
    }

    public var description: String { "\(message); \(action)" }

    enum CodingKeys: String, CodingKey { case code, message, action, path }

    /// Every key written, `path` as `null` when there is none.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code)
        try c.encode(message, forKey: .message)
        try c.encode(action, forKey: .action)
        try c.encode(path, forKey: .path)
    }

    /// The rule names an account this machine does not have.
    static func accountMissing(_ name: String?) -> RuleTrouble {
        if let name {
            return RuleTrouble(code: "account_missing", message: "there is no account named \(DisplayText.escape(name))",
                               action: "add it with `instant-upload account add`, or change the rule's account")
        }
        return RuleTrouble(code: "account_missing", message: "the rule names no account, and there is not exactly one",
                           action: "give the rule one: `account = NAME` in its section of the config")
    }

    /// The config file could not be read; the rules as they were keep running.
    static func configProblem(_ problem: String) -> RuleTrouble {
        RuleTrouble(code: "config_problem", message: "the configuration file has a problem (\(problem)); the rules as they were before keep running",
                    action: "fix that line; the change is picked up by itself")
    }

    /// Files found and not queued: one trouble each, the first `shownFiles` of them by
    /// path, then one for the rest.
    static func notQueued(_ files: [LocalPath: String], every delay: Duration) -> [RuleTrouble] {
        let sorted = files.sorted { $0.key < $1.key }
        let action = "it is looked at again every \(delay.components.seconds) s and queued as soon as it can be"
        var troubles = sorted.prefix(shownFiles).map { path, reason in
            RuleTrouble(code: "not_queued", message: "\(path.display) was found but is not queued: \(reason)", action: action, path: path.display)
        }
        if sorted.count > shownFiles {
            troubles.append(RuleTrouble(code: "not_queued", message: "\(sorted.count - shownFiles) more files were found but are not queued",
                                        action: action))
        }
        return troubles
    }

    static let shownFiles = 20

    /// The rule's folder is watched by an earlier rule of the config already.
    static func folderWatchedTwice(rule: WatchRule, by other: WatchRule, _ overlap: WatchRule.Overlap) -> RuleTrouble {
        let message = switch overlap {
        case .same: "\(rule.folder.display) is the folder the rule \(other.id) watches (\(other.folder.display))"
        case .inside: "\(rule.folder.display) is inside \(other.folder.display), which the rule \(other.id) watches with everything below it"
        case .around: "\(rule.folder.display) holds \(other.folder.display), which the rule \(other.id) watches"
        }
        return RuleTrouble(code: "folder_watched_twice", message: message + "; a folder is watched by one rule only, so this rule is not",
                           action: "remove one of the two (`instant-upload watch remove \(rule.id)`), or point this one at another folder",
                           path: rule.folder.display)
    }

    static func encode(_ troubles: [RuleTrouble]) -> String {
        (try? JSONEncoder().encode(troubles)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    /// Troubles as stored; an unreadable value reads as none.
    public static func decode(_ text: String) -> [RuleTrouble] {
        (try? JSONDecoder().decode([RuleTrouble].self, from: Data(text.utf8))) ?? []
    }
}
