/// Arguments that are not options, in order: `ID`, `FILE...`, `[URL]`.
public struct PositionalSpec: Sendable, Equatable {
    /// The placeholder in usage lines and messages, e.g. `FILE`.
    public var name: String
    public var help: String
    public var minCount: Int
    /// `nil` for no upper bound.
    public var maxCount: Int?
    public var kind: ValueKind

    public init(name: String, help: String, minCount: Int, maxCount: Int?, kind: ValueKind = .text) {
        precondition(minCount >= 0 && (maxCount ?? minCount) >= minCount, "positional \(name): bad counts")
        self.name = name; self.help = help; self.minCount = minCount; self.maxCount = maxCount; self.kind = kind
    }

    /// Exactly one, e.g. `show ID`.
    public static func one(_ name: String, kind: ValueKind = .text, help: String) -> PositionalSpec {
        PositionalSpec(name: name, help: help, minCount: 1, maxCount: 1, kind: kind)
    }

    /// None or one, e.g. `[URL]`.
    public static func optional(_ name: String, kind: ValueKind = .text, help: String) -> PositionalSpec {
        PositionalSpec(name: name, help: help, minCount: 0, maxCount: 1, kind: kind)
    }

    /// One or more, e.g. `FILE...`.
    public static func oneOrMore(_ name: String, kind: ValueKind = .text, help: String) -> PositionalSpec {
        PositionalSpec(name: name, help: help, minCount: 1, maxCount: nil, kind: kind)
    }

    /// Any number, e.g. `[ID...]`.
    public static func zeroOrMore(_ name: String, kind: ValueKind = .text, help: String) -> PositionalSpec {
        PositionalSpec(name: name, help: help, minCount: 0, maxCount: nil, kind: kind)
    }

    /// `FILE...`, `[URL]`, or `completed|failed|all` when the words are fixed.
    var synopsis: String {
        var word = name
        if case .choice(let words) = kind { word = words.joined(separator: "|") }
        if maxCount != 1 { word += "..." }
        return minCount == 0 ? "[\(word)]" : word
    }
}
