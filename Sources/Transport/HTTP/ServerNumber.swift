import Platform

/// Numbers a server sends (`Upload-Offset`, `Content-Length`, `getcontentlength`, quota,
/// `Retry-After`, ...) are hostile until parsed: ASCII digits only, no sign, no spaces
/// inside, no exponent, within `Int64` and within the range the caller says makes sense.
/// Anything else is a `ProtocolViolation` that names the field and quotes the server.
///
/// No floating-point value is ever involved: `inf`, `1e300`, `NaN` and `0x10` are simply
/// not digits.
public enum ServerNumber {
    /// What a piece of text is, read as a number.
    public enum Reading: Equatable, Sendable {
        case value(Int64)
        /// Digits only, but more than `Int64` holds.
        case tooLarge
        /// Empty, signed, fractional, an exponent, letters, spaces inside...
        case notANumber
    }

    /// Parses `text` (surrounding spaces and tabs allowed, as HTTP allows them around a
    /// header value) as a non-negative whole number within `range`.
    public static func parse(_ text: String, field: String, in range: ClosedRange<Int64> = 0...Int64.max) throws(ProtocolViolation) -> Int64 {
        switch read(text) {
        case .value(let value) where range.contains(value):
            return value
        case .value, .tooLarge:
            throw ProtocolViolation("the server sent \(field) `\(quoted(text))`, which is out of range"
                                    + (range.lowerBound == 0 && range.upperBound == Int64.max
                                       ? "" : " (\(range.lowerBound) to \(range.upperBound) makes sense here)"),
                                    said: "\(field): \(text)")
        case .notANumber:
            throw ProtocolViolation("the server sent \(field) `\(quoted(text))`, which is not a whole number",
                                    said: "\(field): \(text)")
        }
    }

    /// The same, for an optional header: nil when absent, a violation when present but wrong.
    public static func parseOptional(_ text: String?, field: String, in range: ClosedRange<Int64> = 0...Int64.max) throws(ProtocolViolation) -> Int64? {
        guard let text else { return nil }
        return try parse(text, field: field, in: range)
    }

    /// The digits' value, or nil when `text` is not a plain non-negative decimal that fits `Int64`.
    public static func value(of text: some StringProtocol) -> Int64? {
        if case .value(let value) = read(text) { return value }
        return nil
    }

    /// Reads `text` byte by byte: optional spaces and tabs, one or more ASCII digits,
    /// optional spaces and tabs. Overflow is noticed, never wrapped or trapped.
    public static func read(_ text: some StringProtocol) -> Reading {
        var digits = Substring(text).utf8[...]
        while let first = digits.first, first == 0x20 || first == 0x09 { digits.removeFirst() }
        while let last = digits.last, last == 0x20 || last == 0x09 { digits.removeLast() }
        guard !digits.isEmpty else { return .notANumber }
        var value: Int64 = 0
        var overflowed = false
        for byte in digits {
            guard byte >= 0x30, byte <= 0x39 else { return .notANumber }
            if overflowed { continue }
            let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = shifted.addingReportingOverflow(Int64(byte - 0x30))
            if o1 || o2 { overflowed = true } else { value = sum }
        }
        return overflowed ? .tooLarge : .value(value)
    }

    /// The server's words, shortened and with control characters and bidi overrides
    /// escaped, for a message a person reads on a terminal.
    public static func quoted(_ text: some StringProtocol) -> String {
        let scalars = Substring(text).unicodeScalars
        let head = String(String.UnicodeScalarView(scalars.prefix(40)))
        return DisplayText.escape(head) + (scalars.count > 40 ? "…" : "")
    }
}
