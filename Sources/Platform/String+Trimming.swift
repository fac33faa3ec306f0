extension StringProtocol {
    /// The text without the spaces and tabs at either end: Foundation's `.whitespaces` (tab
    /// and the Unicode space separators), newlines kept.
    public func trimmingBlanks() -> String { trimmingScalars(where: \.isBlank) }

    /// The text without the whitespace and line breaks at either end: Foundation's
    /// `.whitespacesAndNewlines`.
    public func trimmingWhitespace() -> String { trimmingScalars(where: \.isWhitespaceOrNewline) }

    /// The text without the Unicode scalars at either end for which `drop` holds.
    public func trimmingScalars(where drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !drop($0) })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}

extension Unicode.Scalar {
    /// A tab or a Unicode space separator (category Zs).
    public var isBlank: Bool { self == "\t" || properties.generalCategory == .spaceSeparator }

    /// A blank, a line or paragraph separator, or one of LF, VT, FF, CR and NEL.
    public var isWhitespaceOrNewline: Bool {
        switch properties.generalCategory {
        case .spaceSeparator, .lineSeparator, .paragraphSeparator: true
        default: self == "\t" || ("\n"..."\r").contains(self) || value == 0x85
        }
    }

    /// A letter, mark or number in any script: Foundation's `.alphanumerics`.
    public var isAlphanumeric: Bool {
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .nonspacingMark, .spacingMark, .enclosingMark,
             .decimalNumber, .letterNumber, .otherNumber: true
        default: false
        }
    }
}
