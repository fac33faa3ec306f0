/// The character classes of XML 1.0 (fifth edition), by scalar value.
enum XMLCharacters {
    /// `Char`: what a document may hold at all. No NUL, no C0 control but tab, LF and CR,
    /// no surrogate, no U+FFFE or U+FFFF.
    static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }

    /// `NameStartChar`: what a name may begin with.
    static func isNameStart(_ value: UInt32) -> Bool {
        switch value {
        case 0x41...0x5A, 0x61...0x7A, 0x5F, 0x3A: // A-Z a-z _ :
            true
        case 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2FF, 0x370...0x37D, 0x37F...0x1FFF, 0x200C...0x200D,
             0x2070...0x218F, 0x2C00...0x2FEF, 0x3001...0xD7FF, 0xF900...0xFDCF, 0xFDF0...0xFFFD, 0x10000...0xEFFFF:
            true
        default:
            false
        }
    }

    /// `NameChar`: what may follow in a name.
    static func isNameCharacter(_ value: UInt32) -> Bool {
        switch value {
        case 0x2D, 0x2E, 0x30...0x39, 0xB7, 0x300...0x36F, 0x203F...0x2040: true // - . 0-9 · combining marks ‿ ⁀
        default: isNameStart(value)
        }
    }

    /// `U+0001`, for messages.
    static func shown(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
