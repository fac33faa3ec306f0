/// The order a file manager lists names in: letters without regard to case, and runs of
/// digits by their value, so `Photos 2` comes before `Photos 10`.
enum NaturalOrder {
    static func precedes(_ a: String, _ b: String) -> Bool {
        var left = a.lowercased().unicodeScalars[...]
        var right = b.lowercased().unicodeScalars[...]
        while let x = left.first, let y = right.first {
            if x.isDigit && y.isDigit {
                let (m, n) = (left.prefix(while: \.isDigit), right.prefix(while: \.isDigit))
                left = left.dropFirst(m.count)
                right = right.dropFirst(n.count)
                let (p, q) = (m.drop { $0 == "0" }, n.drop { $0 == "0" })
                if p.count != q.count { return p.count < q.count }
                if !p.elementsEqual(q) { return p.lexicographicallyPrecedes(q) }
                continue
            }
            if x != y { return x < y }
            left = left.dropFirst()
            right = right.dropFirst()
        }
        // Equal so far: the shorter first, then case decides, so the order never depends on
        // the order the server listed them in.
        if left.isEmpty != right.isEmpty { return left.isEmpty }
        return a < b
    }
}

extension Unicode.Scalar {
    fileprivate var isDigit: Bool { ("0"..."9").contains(self) }
}
