/// Turns names from disk or from a server into text that is safe to print on a terminal.
public enum DisplayText {
    /// Escapes control characters (`\n`, `\t`, `\x1b`...) and bytes that are not UTF-8
    /// (`\xff`), so a file name can never move the cursor or hide itself.
    public static func escape(_ bytes: [UInt8]) -> String {
        if bytes.allSatisfy(isPlain) { return String(decoding: bytes, as: UTF8.self) }
        var out = ""
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            let length = utf8Length(bytes, at: i)
            if length == 0 {
                out += hex(b); i += 1; continue
            }
            if length == 1 {
                switch b {
                case UInt8(ascii: "\n"): out += "\\n"
                case UInt8(ascii: "\t"): out += "\\t"
                case UInt8(ascii: "\r"): out += "\\r"
                case UInt8(ascii: "\\"): out += "\\\\"
                case 0..<0x20, 0x7f: out += hex(b)
                default: out.unicodeScalars.append(Unicode.Scalar(b))
                }
                i += 1; continue
            }
            let scalarText = String(decoding: bytes[i..<(i + length)], as: UTF8.self)
            let scalar = scalarText.unicodeScalars.first!
            // C1 controls and bidi overrides can also rearrange what a terminal shows.
            if (0x80...0x9f).contains(scalar.value) || (0x202a...0x202e).contains(scalar.value)
                || (0x2066...0x2069).contains(scalar.value) {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out += scalarText
            }
            i += length
        }
        return out
    }

    public static func escape(_ text: String) -> String { text.everyUTF8Byte(isPlain) ? text : escape(Array(text.utf8)) }

    /// Printable ASCII other than the backslash: shown as it is (most names are only that).
    @inline(__always) private static func isPlain(_ b: UInt8) -> Bool { b >= 0x20 && b < 0x7f && b != UInt8(ascii: "\\") }

    /// A count with thousands separators, e.g. `13,000,000`.
    public static func grouped<Number: BinaryInteger>(_ number: Number) -> String {
        let digits = Array(String(number.magnitude))
        var out = ""
        for (i, digit) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return number < 0 ? "-" + out : out
    }

    /// Escapes only what can move a terminal's cursor or rearrange a line (control
    /// characters, bidi overrides), the way `escape` writes them, and leaves backslashes
    /// alone: text that was already escaped passes unchanged. For whole log lines.
    public static func escapeControls(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0a: out += "\\n"
            case 0x09: out += "\\t"
            case 0x0d: out += "\\r"
            case 0..<0x20, 0x7f: out += hex(UInt8(scalar.value))
            case 0x80...0x9f, 0x202a...0x202e, 0x2066...0x2069: out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return "\\x" + String(digits[Int(b >> 4)]) + String(digits[Int(b & 0xf)])
    }

    /// Length of the valid UTF-8 sequence starting at `i`, or 0 when it is not valid.
    static func utf8Length(_ b: [UInt8], at i: Int) -> Int {
        let first = b[i]
        let (length, minimum): (Int, UInt32)
        switch first {
        case 0x00...0x7f: return 1
        case 0xc2...0xdf: (length, minimum) = (2, 0x80)
        case 0xe0...0xef: (length, minimum) = (3, 0x800)
        case 0xf0...0xf4: (length, minimum) = (4, 0x10000)
        default: return 0
        }
        guard i + length <= b.count else { return 0 }
        var value = UInt32(first) & (0xff >> (length + 1))
        for k in 1..<length {
            let c = b[i + k]
            guard c & 0xc0 == 0x80 else { return 0 }
            value = value << 6 | UInt32(c & 0x3f)
        }
        if value < minimum || value > 0x10ffff || (0xd800...0xdfff).contains(value) { return 0 }
        return length
    }
}
