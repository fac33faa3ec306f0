extension StringProtocol {
    /// The text without the spaces and tabs at either end (see `isBlank`), line breaks kept.
    public func trimmingBlanks() -> String { trimmingScalars(where: \.isBlank) }

    /// The text without the spaces, tabs and line breaks at either end (see `isWhitespaceOrNewline`).
    public func trimmingWhitespace() -> String { trimmingScalars(where: \.isWhitespaceOrNewline) }

    /// The text without the Unicode scalars at either end for which `drop` holds.
    public func trimmingScalars(where drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !drop($0) })!
        // One copy of the bytes between: slices of a string may end between characters, on
        // scalar boundaries.
        return String(self[first..<scalars.index(after: last)])
    }
}

extension Unicode.Scalar {
    /// A tab or a space: U+0020, U+00A0, U+1680, U+2000 to U+200B, U+202F, U+205F, U+3000.
    /// Foundation's `.whitespaces`, which keeps U+200B (zero width space) from an older
    /// Unicode, where it was a space separator.
    public var isBlank: Bool {
        switch value {
        case 0x09, 0x20, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// A blank, or a line break: LF, VT, FF, CR, NEL, U+2028 and U+2029 (Foundation's
    /// `.whitespacesAndNewlines`).
    public var isWhitespaceOrNewline: Bool {
        switch value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: true
        default: isBlank
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
