/// Why an `XMLReader` stopped, and on which line.
struct XMLReaderError: Error, Equatable, Sendable, CustomStringConvertible {
    enum Reason: Equatable, Sendable {
        /// The bytes are not UTF-8 text: what gave it away (an invalid sequence, NUL bytes,
        /// a UTF-16 byte-order mark).
        case notUTF8(String)
        /// The XML declaration names an encoding other than UTF-8 or US-ASCII.
        case declaredEncoding(String)
        /// A `<!DOCTYPE`: no DTD is ever read, so no entity is ever defined or expanded.
        case doctype
        /// Elements nest deeper than the reader was told to go.
        case tooDeep(limit: Int)
        /// Anything else that breaks XML 1.0 or Namespaces in XML: what is wrong, in words.
        case malformed(String)
    }

    var reason: Reason
    /// 1-based, counting line feeds before the fault.
    var line: Int

    init(_ reason: Reason, line: Int) { self.reason = reason; self.line = line }

    var description: String {
        switch reason {
        case .notUTF8(let detail): "the document is not UTF-8 text (\(detail))"
        case .declaredEncoding(let name): "the document declares the encoding `\(ServerNumber.quoted(name))`; only UTF-8 is read"
        case .doctype: "line \(line): the document has a DOCTYPE; DTDs are not read"
        case .tooDeep(let limit): "line \(line): elements nest more than \(limit) deep"
        case .malformed(let detail): "line \(line): \(detail)"
        }
    }
}
