/// A `Content-Range` header of a byte range: `bytes 100-999/1000`, `bytes 100-999/*` or
/// (with 416) `bytes */1000`. Every number is plain digits within `Int64`; the last byte
/// is below `Int64.max`, so the range's length always fits.
struct ContentRange: Equatable, Sendable {
    var first: Int64?
    var last: Int64?
    var total: Int64?

    init(first: Int64?, last: Int64?, total: Int64?) { self.first = first; self.last = last; self.total = total }

    init?(_ header: String) {
        let text = header.trimmingSpaces
        guard text.utf8.count <= 100, text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst("bytes ".count)
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        if halves[1] == "*" {
            total = nil
        } else {
            guard let value = Self.number(halves[1]) else { return nil }
            total = value
        }
        if halves[0] == "*" {
            guard total != nil else { return nil }
            first = nil; last = nil
            return
        }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let a = Self.number(bounds[0]), let b = Self.number(bounds[1]), b >= a, b < Int64.max else { return nil }
        if let total, b >= total { return nil }
        first = a; last = b
    }

    /// Bytes the range covers, when it names one.
    var count: Int64? {
        guard let first, let last else { return nil }
        return last - first + 1
    }

    /// Digits and nothing else: no sign, no spaces, no exponent.
    private static func number(_ text: Substring) -> Int64? {
        guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return ServerNumber.value(of: text)
    }
}
