/// Numbers a server sends (`Upload-Offset`, `Content-Length`, `getcontentlength`, quota,
/// `Retry-After`, ...) are hostile until parsed: ASCII digits only, no sign, no spaces
/// inside, no exponent, within `Int64` and within the range the caller says makes sense.
/// Anything else is a `ProtocolViolation` that names the field and quotes the server.
public enum ServerNumber {
    /// Parses `text` (surrounding spaces and tabs allowed, as HTTP allows them around a
    /// header value) as a non-negative whole number within `range`.
    public static func parse(_ text: String, field: String, in range: ClosedRange<Int64> = 0...Int64.max) throws(ProtocolViolation) -> Int64 {
        guard let value = value(of: text), range.contains(value) else {
            throw ProtocolViolation("the server sent \(field) `\(quoted(text))`, which is not a whole number"
                                    + (range == 0...Int64.max ? "" : " from \(range.lowerBound) to \(range.upperBound)"))
        }
        return value
    }

    /// The same, for an optional header: nil when absent, a violation when present but wrong.
    public static func parseOptional(_ text: String?, field: String, in range: ClosedRange<Int64> = 0...Int64.max) throws(ProtocolViolation) -> Int64? {
        guard let text else { return nil }
        return try parse(text, field: field, in: range)
    }

    /// The digits' value, or nil when `text` is not a plain non-negative decimal that fits `Int64`.
    public static func value(of text: String) -> Int64? {
        var digits = Substring(text)[...]
        while let first = digits.first, first == " " || first == "\t" { digits.removeFirst() }
        while let last = digits.last, last == " " || last == "\t" { digits.removeLast() }
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in digits.utf8 {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = shifted.addingReportingOverflow(Int64(byte - 0x30))
            if o1 || o2 { return nil }
            value = sum
        }
        return value
    }

    /// The server's words, shortened and with control characters shown, for a message.
    static func quoted(_ text: String) -> String {
        let visible = text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : String($0) }.joined()
        return visible.count > 40 ? String(visible.prefix(40)) + "…" : visible
    }
}
