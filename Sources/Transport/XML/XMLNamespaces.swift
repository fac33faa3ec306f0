/// The namespace bindings in force while an `XMLReader` walks the document: each element's
/// declarations hold until its end tag, hiding an outer binding of the same prefix.
///
/// Each prefix keeps its own stack of URIs, so a lookup is one dictionary read however many
/// prefixes are declared or however deep the element: a hostile reply that declares ten
/// thousand prefixes on its root costs nothing per element.
struct XMLNamespaces {
    static let xml = "http://www.w3.org/XML/1998/namespace"
    static let xmlns = "http://www.w3.org/2000/xmlns/"

    /// Prefix → its URIs, innermost last. The default namespace is the prefix "", and
    /// `xmlns=""` binds it to "" (no namespace). `xml` is bound from the start.
    private var bindings: [String: [String]] = ["xml": [xml]]
    /// The prefixes declared by the open elements, in order, and where each element's begin.
    private var declared: [String] = []
    private var marks: [Int] = []

    /// Opens an element's scope; its declarations follow.
    mutating func enter() { marks.append(declared.count) }

    mutating func declare(prefix: String, namespace: String) {
        bindings[prefix, default: []].append(namespace)
        declared.append(prefix)
    }

    /// Closes the innermost element's scope: what it declared is forgotten.
    mutating func leave() {
        guard let mark = marks.popLast() else { return }
        for prefix in declared[mark...] {
            _ = bindings[prefix]?.popLast()
            if bindings[prefix]?.isEmpty == true { bindings[prefix] = nil }
        }
        declared.removeSubrange(mark...)
    }

    /// The URI `prefix` stands for here, nil when it is not declared. For the default
    /// namespace ("") that is "" when there is none.
    func namespace(of prefix: String) -> String? {
        if prefix.isEmpty { return bindings[""]?.last ?? "" }
        return bindings[prefix]?.last
    }
}
