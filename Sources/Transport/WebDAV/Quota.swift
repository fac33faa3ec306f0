/// How much room an account has, per RFC 4331.
public struct Quota: Sendable, Equatable {
    /// Bytes that may still be stored; nil when the server does not know or sets no limit.
    public var availableBytes: Int64?
    public var usedBytes: Int64?

    public init(availableBytes: Int64?, usedBytes: Int64?) {
        self.availableBytes = availableBytes; self.usedBytes = usedBytes
    }

    /// Nil when the server said nothing usable. Negative values are Nextcloud's codes for
    /// "not computed", "unknown" and "unlimited" (-1, -2, -3), not sizes.
    init?(available: String?, used: String?) {
        func bytes(_ text: String?) -> Int64? {
            guard let text, let value = Int64(text.trimmingCharacters(in: .whitespaces)), value >= 0 else { return nil }
            return value
        }
        let available = bytes(available), used = bytes(used)
        if available == nil && used == nil { return nil }
        self.init(availableBytes: available, usedBytes: used)
    }
}
