import Foundation
import Platform

/// A JSON reply from a server (status.php, OCS, Login Flow), read defensively: every value
/// is looked up by path and checked for its type, numbers go through `ServerNumber`, and
/// text is bounded before anyone shows it.
struct ServerJSON {
    let root: Any
    /// What the reply is, for messages (`status.php`, `the capabilities`).
    let source: String

    /// Replies above this size are not what these endpoints send.
    static let limit = 1 << 20

    init(_ bytes: [UInt8], source: String) throws(ProtocolViolation) {
        self.source = source
        guard bytes.count <= Self.limit,
              let object = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]),
              object is [String: Any] else {
            throw ProtocolViolation("\(source) is not a JSON object")
        }
        root = object
    }

    /// The value at a path of object keys, or nil.
    func value(_ path: [String]) -> Any? {
        var current: Any = root
        for key in path {
            guard let object = current as? [String: Any], let next = object[key] else { return nil }
            current = next
        }
        return current is NSNull ? nil : current
    }

    func has(_ path: [String]) -> Bool { value(path) != nil }

    /// A string value, nil when absent; a violation when present but not a string or too long.
    func string(_ path: [String], maxLength: Int = 1000) throws(ProtocolViolation) -> String? {
        guard let raw = value(path) else { return nil }
        guard let text = raw as? String else {
            throw ProtocolViolation("\(source) has a \(path.joined(separator: ".")) that is not text")
        }
        guard text.utf8.count <= maxLength else {
            throw ProtocolViolation("\(source) has an overlong \(path.joined(separator: "."))")
        }
        return text
    }

    /// A flag written as JSON `true`/`false` or, as ownCloud 10 does, as the text "true"/"false".
    func flag(_ path: [String]) throws(ProtocolViolation) -> Bool? {
        guard let raw = value(path) else { return nil }
        if let text = raw as? String {
            switch text.lowercased() {
            case "true", "1": return true
            case "false", "0", "": return false
            default: throw ProtocolViolation("\(source) has \(path.joined(separator: ".")) `\(ServerNumber.quoted(text))`, not true or false")
            }
        }
        if let number = raw as? NSNumber, let value = ServerNumber.value(of: number.stringValue), value <= 1 { return value == 1 }
        if let bool = raw as? Bool { return bool }
        throw ProtocolViolation("\(source) has a \(path.joined(separator: ".")) that is not true or false")
    }

    /// A whole number (a JSON number or digits in a string), through `ServerNumber`.
    func number(_ path: [String], in range: ClosedRange<Int64> = 0...Int64.max) throws(ProtocolViolation) -> Int64? {
        guard let raw = value(path) else { return nil }
        let field = "\(path.joined(separator: ".")) in \(source)"
        if let text = raw as? String { return try ServerNumber.parse(text, field: field, in: range) }
        if let number = raw as? NSNumber { return try ServerNumber.parse(number.stringValue, field: field, in: range) }
        throw ProtocolViolation("\(source) has a \(path.joined(separator: ".")) that is not a number")
    }

    /// A list of strings, or nil; non-string members are a violation.
    func strings(_ path: [String]) throws(ProtocolViolation) -> [String]? {
        guard let raw = value(path) else { return nil }
        guard let list = raw as? [Any], list.count <= 100 else {
            throw ProtocolViolation("\(source) has a \(path.joined(separator: ".")) that is not a short list")
        }
        var out: [String] = []
        for item in list {
            guard let text = item as? String, text.utf8.count <= 100 else {
                throw ProtocolViolation("\(source) has a \(path.joined(separator: ".")) with a member that is not short text")
            }
            out.append(text)
        }
        return out
    }

    /// Text from a server made safe to show: control characters escaped, cut at 100 characters.
    static func shown(_ text: String) -> String {
        let escaped = DisplayText.escape(text)
        return escaped.count > 100 ? String(escaped.prefix(100)) + "…" : escaped
    }
}
