/// How much room an account has, per RFC 4331.
public struct Quota: Sendable, Equatable {
    /// Bytes that may still be stored; nil when the server does not know or sets no limit.
    public var availableBytes: Int64?
    public var usedBytes: Int64?

    public init(availableBytes: Int64?, usedBytes: Int64?) {
        self.availableBytes = availableBytes; self.usedBytes = usedBytes
    }

    /// Nil when the server said nothing (absent or empty elements). -1, -2 and -3 are
    /// Nextcloud's codes for "not computed", "unknown" and "unlimited", not sizes; any
    /// other value that is not a plain number is a violation.
    init?(available: String?, used: String?) throws(ProtocolViolation) {
        func bytes(_ text: String?, _ field: String) throws(ProtocolViolation) -> Int64? {
            guard let text, !text.isEmpty, !["-1", "-2", "-3"].contains(text) else { return nil }
            return try ServerNumber.parse(text, field: field)
        }
        let available = try bytes(available, "quota-available-bytes"), used = try bytes(used, "quota-used-bytes")
        if available == nil && used == nil { return nil }
        self.init(availableBytes: available, usedBytes: used)
    }
}
