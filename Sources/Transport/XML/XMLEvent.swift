/// One thing an `XMLReader` found, in document order.
enum XMLEvent: Equatable, Sendable {
    /// `<name attribute="value">`, or `<name/>`, which is followed by its `.end` at once.
    /// Namespace declarations (`xmlns`, `xmlns:p`) are applied to the names, not listed.
    case start(XMLName, attributes: [XMLAttribute])
    case end(XMLName)
    /// Character data, with references replaced and CDATA sections unwrapped, every line
    /// end read as `\n`. Comments do not split it; a processing instruction does.
    case text(String)
    /// `<?target data?>` (the XML declaration at the start is not one).
    case processingInstruction(target: String, data: String)
}

/// An element's or attribute's expanded name: the namespace URI its prefix (or the default
/// namespace) stands for, and its local name.
///
/// Two names are equal when URI and local name are: the prefix a server happens to write
/// (`d:`, `D:`, `ns0:`, none) is kept for messages only.
struct XMLName: Hashable, Sendable, CustomStringConvertible {
    /// "" for no namespace.
    var namespace: String
    var localName: String
    var prefix: String?

    init(_ namespace: String, _ localName: String, prefix: String? = nil) {
        self.namespace = namespace; self.localName = localName; self.prefix = prefix
    }

    /// As written: `d:href`.
    var qualifiedName: String { prefix.map { "\($0):\(localName)" } ?? localName }

    var description: String { "{\(namespace)}\(localName)" }

    static func == (a: XMLName, b: XMLName) -> Bool { a.namespace == b.namespace && a.localName == b.localName }

    func hash(into hasher: inout Hasher) {
        hasher.combine(namespace)
        hasher.combine(localName)
    }
}

/// An attribute of a start tag. An unprefixed attribute is in no namespace, whatever the
/// default namespace is.
struct XMLAttribute: Equatable, Sendable {
    var name: XMLName
    var value: String
}
