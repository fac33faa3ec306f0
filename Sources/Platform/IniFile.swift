/// A small INI reader for the config file: `[section]` or `[section "name"]` headers,
/// `key = value` lines, `#`/`;` comments. Errors name the line.
///
/// A quoted value may carry any bytes through escapes (`\\`, `\"`, `\xHH`), read with
/// `Section.bytes(_:)` and written with `IniFile.quoted(_:)`: that is how a folder whose
/// name is not UTF-8 survives a text file. `values` keeps the text as written between
/// the quotes, as it always has.
public struct IniFile: Sendable, Equatable {
    public struct Section: Sendable, Equatable {
        public var kind: String
        public var name: String?
        public var values: [String: String]
        public var lines: [String: Int]
        /// Each value as written after `=`, quotes and escapes included.
        public var rawValues: [String: String] = [:]
        /// The header's line (0 for the lines before any header), and the section's last
        /// line that is not a comment or blank.
        public var headerLine = 0
        public var lastLine = 0
    }

    public var sections: [Section]

    public struct ParseError: Error, CustomStringConvertible, Equatable {
        public var line: Int
        public var message: String
        public init(line: Int, message: String) { self.line = line; self.message = message }
        public var description: String { "line \(line): \(message)" }
    }

    public init(parsing text: String) throws(ParseError) {
        sections = [Section(kind: "", name: nil, values: [:], lines: [:])]
        // Lines end at every LF scalar, CRLF included: split by Character, "\r\n" is one
        // Character that is not "\n", and a whole Windows-edited file would be one line.
        for (index, raw) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = Substring(raw).trimmingScalars { $0.isBlank || $0 == "\r" }
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else { throw ParseError(line: number, message: "a section header must end with `]`") }
                let inner = line.dropFirst().dropLast().trimmingBlanks()
                var kind = inner
                var name: String?
                if let quote = inner.firstIndex(of: "\"") {
                    kind = inner[..<quote].trimmingBlanks()
                    let rest = inner[inner.index(after: quote)...]
                    guard rest.hasSuffix("\"") else { throw ParseError(line: number, message: "the section name's quote is not closed") }
                    name = String(rest.dropLast())
                }
                guard !kind.isEmpty, kind.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                    throw ParseError(line: number, message: "`\(inner)` is not a section name")
                }
                sections.append(Section(kind: kind, name: name, values: [:], lines: [:], headerLine: number, lastLine: number))
                continue
            }
            guard let eq = line.firstIndex(of: "=") else {
                throw ParseError(line: number, message: "expected `key = value`, found `\(line.prefix(60))`")
            }
            let key = line[..<eq].trimmingBlanks()
            let written = line[line.index(after: eq)...].trimmingBlanks()
            var value = written
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard !key.isEmpty else { throw ParseError(line: number, message: "a value without a key") }
            sections[sections.count - 1].values[key] = value
            sections[sections.count - 1].rawValues[key] = written
            sections[sections.count - 1].lines[key] = number
            sections[sections.count - 1].lastLine = number
        }
    }

    public func sections(_ kind: String) -> [Section] { sections.filter { $0.kind == kind } }
}

// MARK: - Typed values

extension IniFile.Section {
    /// The value's bytes: a quoted value with its escapes undone, an unquoted one as written.
    public func bytes(_ key: String) throws(IniFile.ParseError) -> [UInt8]? {
        guard let written = rawValues[key] else { return nil }
        let utf8 = Array(written.utf8)
        guard utf8.count >= 2, utf8.first == UInt8(ascii: "\""), utf8.last == UInt8(ascii: "\"") else { return utf8 }
        var out: [UInt8] = []
        var i = 1
        while i < utf8.count - 1 {
            let c = utf8[i]
            guard c == UInt8(ascii: "\\"), i + 1 < utf8.count - 1 else { out.append(c); i += 1; continue }
            let next = utf8[i + 1]
            switch next {
            case UInt8(ascii: "\\"), UInt8(ascii: "\""):
                out.append(next); i += 2
            case UInt8(ascii: "x"):
                guard i + 3 <= utf8.count - 2, let high = Self.hexValue(utf8[i + 2]), let low = Self.hexValue(utf8[i + 3]) else {
                    throw IniFile.ParseError(line: lines[key] ?? 0, message: "`\(key)`: `\\x` must be followed by two hex digits")
                }
                out.append(high << 4 | low); i += 4
            default:
                // Not an escape this format knows: the backslash is kept, as a person typed it.
                out.append(c); i += 1
            }
        }
        return out
    }

    /// The value as text (quotes and escapes undone); an error naming the line if it is not UTF-8.
    public func text(_ key: String) throws(IniFile.ParseError) -> String? {
        guard let bytes = try bytes(key) else { return nil }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw IniFile.ParseError(line: lines[key] ?? 0, message: "`\(key)` is not valid UTF-8 text")
        }
        return text
    }

    /// `true`, `yes`, `on`, `1` or `false`, `no`, `off`, `0`.
    public func bool(_ key: String) throws(IniFile.ParseError) -> Bool? {
        guard let raw = try text(key) else { return nil }
        switch raw.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw IniFile.ParseError(line: lines[key] ?? 0, message: "`\(key)` must be true or false, not `\(raw)`")
        }
    }

    public func integer(_ key: String, in range: ClosedRange<Int>) throws(IniFile.ParseError) -> Int? {
        guard let raw = try text(key) else { return nil }
        guard let value = Int(raw), range.contains(value) else {
            throw IniFile.ParseError(line: lines[key] ?? 0,
                                     message: "`\(key)` must be a whole number from \(range.lowerBound) to \(range.upperBound), not `\(raw)`")
        }
        return value
    }

    /// One of `choices`, e.g. `none|year|month|day`.
    public func choice(_ key: String, among choices: [String]) throws(IniFile.ParseError) -> String? {
        guard let raw = try text(key) else { return nil }
        guard choices.contains(raw.lowercased()) else {
            throw IniFile.ParseError(line: lines[key] ?? 0, message: "`\(key)` must be one of \(choices.joined(separator: ", ")), not `\(raw)`")
        }
        return raw.lowercased()
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }
}

// MARK: - Writing

extension IniFile {
    /// `bytes` as a quoted value: `"`, `\` and anything that is not printable UTF-8 escaped.
    public static func quoted(_ bytes: [UInt8]) -> String {
        var out = "\""
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            let length = DisplayText.utf8Length(bytes, at: i)
            if length > 1 {
                out += String(decoding: bytes[i..<(i + length)], as: UTF8.self)
                i += length
                continue
            }
            switch b {
            case UInt8(ascii: "\\"): out += "\\\\"
            case UInt8(ascii: "\""): out += "\\\""
            case 0x20..<0x7f: out.unicodeScalars.append(Unicode.Scalar(b))
            default: out += "\\x" + String(b, radix: 16).leftPad(2)
            }
            i += 1
        }
        return out + "\""
    }

    public static func quoted(_ text: String) -> String { quoted(Array(text.utf8)) }

    /// `text` with the section `[kind "name"]` replaced by `replacement` (its full text,
    /// header included), added at the end when there is none, or removed when
    /// `replacement` is nil. Every other line, comments included, stays as it was.
    public static func settingSection(_ kind: String, name: String?, to replacement: String?, in text: String) throws(ParseError) -> String {
        let ini = try IniFile(parsing: text)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let new = replacement.map { $0.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) } ?? []
        if let section = ini.sections.first(where: { $0.kind == kind && $0.name == name && $0.headerLine > 0 }) {
            var range = (section.headerLine - 1)..<section.lastLine
            // Removing a section takes one blank line after it along, so none pile up.
            if replacement == nil, range.upperBound < lines.count, lines[range.upperBound].trimmingBlanks().isEmpty,
               range.upperBound + 1 < lines.count {
                range = range.lowerBound..<(range.upperBound + 1)
            }
            lines.replaceSubrange(range, with: new)
            return lines.joined(separator: "\n")
        }
        guard !new.isEmpty else { return text }
        while let last = lines.last, last.trimmingBlanks().isEmpty { lines.removeLast() }
        if !lines.isEmpty { lines.append("") }
        return (lines + new + [""]).joined(separator: "\n")
    }
}

extension String {
    fileprivate func leftPad(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
