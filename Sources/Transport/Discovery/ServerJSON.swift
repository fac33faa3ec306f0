import FoundationEssentials
import Platform

/// A JSON reply from a server (status.php, OCS, Login Flow), read defensively: every value
/// is looked up by path and checked for its type, numbers go through `ServerNumber`, and
/// text is bounded before anyone shows it.
struct ServerJSON {
    let root: [String: JSONValue]
    /// What the reply is, for messages (`status.php`, `the capabilities`).
    let source: String

    /// Replies above this size are not what these endpoints send.
    static let limit = 1 << 20

    init(_ bytes: [UInt8], source: String) throws(ProtocolViolation) {
        self.source = source
        guard bytes.count <= Self.limit,
              case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else {
            throw ProtocolViolation("\(source) is not a JSON object")
        }
        root = object
    }

    /// The value at a path of object keys, or nil.
    func value(_ path: [String]) -> JSONValue? {
        var current = JSONValue.object(root)
        for key in path {
            guard case .object(let object) = current, let next = object[key] else { return nil }
            current = next
        }
        return current == .null ? nil : current
    }

    func has(_ path: [String]) -> Bool { value(path) != nil }

    /// A string value, nil when absent; a violation when present but not a string or too long.
    func string(_ path: [String], maxLength: Int = 1000) throws(ProtocolViolation) -> String? {
        guard let raw = value(path) else { return nil }
        guard case .string(let text) = raw else {
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
        switch raw {
        case .string(let text):
            switch text.lowercased() {
            case "true", "1": return true
            case "false", "0", "": return false
            default: throw ProtocolViolation("\(source) has \(path.joined(separator: ".")) `\(ServerNumber.quoted(text))`, not true or false")
            }
        case .number(let text):
            if let value = ServerNumber.value(of: text), value <= 1 { return value == 1 }
        case .bool(let bool):
            return bool
        default:
            break
        }
        throw ProtocolViolation("\(source) has a \(path.joined(separator: ".")) that is not true or false")
    }

    /// A whole number (a JSON number or digits in a string), through `ServerNumber`.
    func number(_ path: [String], in range: ClosedRange<Int64> = 0...Int64.max) throws(ProtocolViolation) -> Int64? {
        guard let raw = value(path) else { return nil }
        let field = "\(path.joined(separator: ".")) in \(source)"
        switch raw {
        case .string(let text), .number(let text): return try ServerNumber.parse(text, field: field, in: range)
        default: break
        }
        throw ProtocolViolation("\(source) has a \(path.joined(separator: ".")) that is not a number")
    }

    /// A list of strings, or nil; non-string members are a violation.
    func strings(_ path: [String]) throws(ProtocolViolation) -> [String]? {
        guard let raw = value(path) else { return nil }
        guard case .array(let list) = raw, list.count <= 100 else {
            throw ProtocolViolation("\(source) has a \(path.joined(separator: ".")) that is not a short list")
        }
        var out: [String] = []
        for item in list {
            guard case .string(let text) = item, text.utf8.count <= 100 else {
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
