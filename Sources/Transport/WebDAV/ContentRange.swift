/// A `Content-Range` header of a byte range: `bytes 100-999/1000`, `bytes 100-999/*` or
/// (with 416) `bytes */1000`.
struct ContentRange: Equatable, Sendable {
    var first: Int64?
    var last: Int64?
    var total: Int64?

    init(first: Int64?, last: Int64?, total: Int64?) { self.first = first; self.last = last; self.total = total }

    init?(_ header: String) {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst("bytes ".count).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        if halves[1] == "*" {
            total = nil
        } else {
            guard let value = Int64(halves[1]), value >= 0 else { return nil }
            total = value
        }
        if halves[0] == "*" {
            guard total != nil else { return nil }
            first = nil; last = nil
            return
        }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let a = Int64(bounds[0]), let b = Int64(bounds[1]), a >= 0, b >= a else { return nil }
        if let total, b >= total { return nil }
        first = a; last = b
    }
}
