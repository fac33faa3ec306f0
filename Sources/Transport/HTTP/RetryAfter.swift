/// A server's `Retry-After`: how long it asked us to wait, read strictly and capped.
///
/// RFC 9110 §10.2.3 allows delta-seconds (digits) or an HTTP date. A number too large for
/// `Int64` or a date centuries away is still a wish to wait long, so it is honoured up to
/// `cap` (as RFC 9111 §1.2.2 asks for delta-seconds that overflow); `inf`, `1e300`, `-1`
/// or `soon` are no `Retry-After` at all and are a `ProtocolViolation` quoting the server.
public struct RetryAfter: Sendable, Equatable {
    /// The longest wait a server can impose on one item: one hour.
    public static let cap: Int64 = 3600

    /// What the server sent, as it sent it (for the reason a person reads).
    public var given: String
    /// Seconds to wait from now, 0 to `cap`.
    public var seconds: Int64
    /// The server asked for more than `cap`.
    public var wasCapped: Bool

    /// Reads `text` as the server sent it, `now` in milliseconds since the epoch.
    public static func parse(_ text: String, now: Int64) throws(ProtocolViolation) -> RetryAfter {
        switch ServerNumber.read(text) {
        case .value(let seconds):
            return RetryAfter(given: text, seconds: min(seconds, cap), wasCapped: seconds > cap)
        case .tooLarge:
            return RetryAfter(given: text, seconds: cap, wasCapped: true)
        case .notANumber:
            guard let at = HTTPDate.milliseconds(text) else {
                throw ProtocolViolation("the server asked to wait `\(ServerNumber.quoted(text))` (Retry-After), which is neither a number of seconds nor a date",
                                        said: "Retry-After: \(text)")
            }
            // Both within years 1900 to 9999 in milliseconds: the difference cannot overflow.
            let (difference, overflow) = at.subtractingReportingOverflow(now)
            let millis = overflow ? (at > now ? Int64.max : 0) : max(0, difference)
            let seconds = millis / 1000 + (millis % 1000 == 0 ? 0 : 1)
            return RetryAfter(given: text, seconds: min(seconds, cap), wasCapped: seconds > cap)
        }
    }

    /// How a reason shows the wait: the server's words, and the cap when it applied.
    public var shown: String {
        let said = ServerNumber.quoted(given.trimmingSpaces)
        // Digits are seconds, said as such; a date is quoted as the server wrote it.
        let asked = said.allSatisfy { $0 >= "0" && $0 <= "9" } ? "it asked to wait \(said) s" : "it asked to wait until `\(said)`"
        return wasCapped ? "\(asked); waiting \(Self.cap / 3600) h, the longest this program waits" : asked
    }
}

extension String {
    var trimmingSpaces: Substring {
        var s = self[...]
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return s
    }
}
