import Foundation
/// A small INI reader for the config file: `[section]` or `[section "name"]` headers,
/// `key = value` lines, `#`/`;` comments. Errors name the line.
public struct IniFile: Sendable, Equatable {
    public struct Section: Sendable, Equatable {
        public var kind: String
        public var name: String?
        public var values: [String: String]
        public var lines: [String: Int]
    }

    public var sections: [Section]

    public struct ParseError: Error, CustomStringConvertible, Equatable {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    public init(parsing text: String) throws(ParseError) {
        sections = [Section(kind: "", name: nil, values: [:], lines: [:])]
        // Lines end at every LF scalar, CRLF included: split by Character, "\r\n" is one
        // Character that is not "\n", and a whole Windows-edited file would be one line.
        for (index, raw) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = Substring(raw).trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else { throw ParseError(line: number, message: "a section header must end with `]`") }
                let inner = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                var kind = inner
                var name: String?
                if let quote = inner.firstIndex(of: "\"") {
                    kind = inner[..<quote].trimmingCharacters(in: .whitespaces)
                    let rest = inner[inner.index(after: quote)...]
                    guard rest.hasSuffix("\"") else { throw ParseError(line: number, message: "the section name's quote is not closed") }
                    name = String(rest.dropLast())
                }
                guard !kind.isEmpty, kind.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                    throw ParseError(line: number, message: "`\(inner)` is not a section name")
                }
                sections.append(Section(kind: kind, name: name, values: [:], lines: [:]))
                continue
            }
            guard let eq = line.firstIndex(of: "=") else {
                throw ParseError(line: number, message: "expected `key = value`, found `\(line.prefix(60))`")
            }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            var value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard !key.isEmpty else { throw ParseError(line: number, message: "a value without a key") }
            sections[sections.count - 1].values[key] = value
            sections[sections.count - 1].lines[key] = number
        }
    }

    public func sections(_ kind: String) -> [Section] { sections.filter { $0.kind == kind } }
}
