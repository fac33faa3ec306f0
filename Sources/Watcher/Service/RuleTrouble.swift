import Foundation
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

    static func encode(_ troubles: [RuleTrouble]) -> String {
        (try? JSONEncoder().encode(troubles)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    /// Troubles as stored; an unreadable value reads as none.
    public static func decode(_ text: String) -> [RuleTrouble] {
        (try? JSONDecoder().decode([RuleTrouble].self, from: Data(text.utf8))) ?? []
    }
}
