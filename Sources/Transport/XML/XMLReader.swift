/// Reads an XML 1.0 document with namespaces, strictly and in one pass, as a sequence of
/// `XMLEvent`s: `while let event = try reader.next() { ... }`.
///
/// Written for what servers send, hostile ones included. No DTD is read (a `<!DOCTYPE` is an
/// error), so the only references are the five predefined entities and character references:
/// nothing expands, nothing is fetched. Elements nest at most `maximumDepth` deep, and the
/// work is linear in the input. Only UTF-8 is read (US-ASCII is part of it); the input is
/// checked for that, and for characters XML does not allow, before any event is read from it.
///
/// Names are resolved against the namespace declarations in scope; a prefix that is not
/// declared is an error. Comments and the XML declaration are read and dropped. After an
/// error, `next()` throws it again.
///
/// A document can be read whole or as it arrives (`init(lookahead:)`, `feed`, `finish`): a
/// long reply is then never held, only the bytes not read yet. A fed reader reads an event
/// only once more than `lookahead` bytes are there after the last one, or the document has
/// ended, so it never mistakes the end of what came so far for the end of the document; in
/// exchange, everything one event reads (its markup, and any text, comments and whitespace
/// before it) must fit in `lookahead` bytes, or it is an error.
struct XMLReader {
    static let defaultMaximumDepth = 256

    let maximumDepth: Int
    /// The input not read yet, and the last event's if it is still here; a fed reader lets
    /// the bytes it has read go (`feed`).
    private var bytes: [UInt8] = []
    private var position = 0
    /// How many bytes, and line feeds, were let go: errors still say the document's line.
    private var dropped = 0
    private var linesBefore = 0
    /// Fed bytes not checked yet: the start of a character whose other bytes are still to come.
    private var unchecked: [UInt8] = []
    /// Whether bytes were checked already: the byte-order marks are looked for at the start only.
    private var checkedAny = false
    /// All the document is there: no more will be fed.
    private var isComplete = false
    /// See the type's comment; `Int.max` for a whole document.
    private let lookahead: Int
    /// The XML declaration (and a byte-order mark) at the start has been read.
    private var prepared = false
    private var phase = Phase.prolog
    private var failure: XMLReaderError?
    /// The elements whose end tag is still to come, outermost first.
    private var open: [XMLName] = []
    private var namespaces = XMLNamespaces()
    /// Character data read since the last event.
    private var text: [UInt8] = []
    /// The end of an empty element (`<a/>`), reported by the next call.
    private var pendingEnd: XMLName?

    private enum Phase { case prolog, content, epilog, finished }

    /// A whole document.
    init(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(XMLReaderError) {
        self.maximumDepth = maximumDepth
        lookahead = .max
        isComplete = true
        try Self.checkCharacters(bytes, atStart: true)
        self.bytes = bytes
        try prepare()
    }

    /// A document that will arrive in pieces, `feed` one by one, then `finish`.
    init(lookahead: Int, maximumDepth: Int = defaultMaximumDepth) {
        self.maximumDepth = maximumDepth
        self.lookahead = lookahead
    }

    /// A fed reader that has read all it can of what came so far: `next()` answered nil, and
    /// the document has not ended.
    var isWaiting: Bool { phase != .finished && failure == nil }

    /// How far into the document the reader has read.
    var offset: Int { dropped + position }
    /// The bytes held: those not read yet, and some read already.
    var held: Int { bytes.count + unchecked.count }

    /// The next piece of the document. Bytes that are not UTF-8 or hold a character XML does
    /// not allow make the next call to `next()` throw, whatever events came before them.
    mutating func feed(_ piece: UnsafeRawBufferPointer) {
        guard failure == nil, !isComplete else { return }
        unchecked.append(contentsOf: piece)
        // The byte-order marks are told from the first bytes as a whole.
        if !checkedAny, unchecked.count < 3 { return }
        let whole = Self.completeCharacters(in: unchecked)
        check(unchecked[..<whole])
        unchecked.removeSubrange(..<whole)
    }

    /// The document has ended: `next()` reads what is left, and a document cut short is an error.
    mutating func finish() {
        guard failure == nil, !isComplete else { return }
        check(unchecked[...])
        unchecked = []
        isComplete = true
    }

    /// Checks fed bytes and keeps them, first letting go of those already read.
    private mutating func check(_ piece: ArraySlice<UInt8>) {
        do throws(XMLReaderError) {
            try Self.checkCharacters(piece, atStart: !checkedAny)
        } catch {
            failure = XMLReaderError(error.reason, line: line(at: bytes.count) + error.line - 1)
            return
        }
        checkedAny = true
        if position >= 64 << 10, position * 2 >= bytes.count {
            linesBefore = line(at: position) - 1
            dropped += position
            bytes.removeSubrange(..<position)
            position = 0
        }
        bytes.append(contentsOf: piece)
    }

    /// How many of `bytes` are whole characters: all but a last one whose bytes have not all
    /// come. A byte that starts no character counts as whole, for the check to refuse.
    private static func completeCharacters(in bytes: [UInt8]) -> Int {
        var start = bytes.count
        while start > 0, bytes.count - start < 4 {
            start -= 1
            let byte = bytes[start]
            if byte & 0xC0 == 0x80 { continue } // a continuation byte: its lead is further back
            let length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            return start + length > bytes.count ? start : bytes.count
        }
        return bytes.count
    }

    /// A byte-order mark and the XML declaration, at the start.
    private mutating func prepare() throws(XMLReaderError) {
        prepared = true
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        if isAt("<?xml"), !isNameByte(at: position + 5) { try readDeclaration() }
    }

    /// The next event, or nil once the document (root element and whatever may follow it)
    /// has been read to its end. A fed reader also answers nil while it waits for more bytes
    /// (`isWaiting`); once it is finished, nil is the end.
    mutating func next() throws(XMLReaderError) -> XMLEvent? {
        if let failure { throw failure }
        guard isComplete || bytes.count - position > lookahead else { return nil }
        do throws(XMLReaderError) {
            if !prepared { try prepare() }
            return try step()
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func step() throws(XMLReaderError) -> XMLEvent? {
        if let end = pendingEnd {
            pendingEnd = nil
            if open.isEmpty { phase = .epilog }
            return .end(end)
        }
        switch phase {
        case .prolog, .epilog: return try stepOutsideRoot()
        case .content: return try stepInsideRoot()
        case .finished: return nil
        }
    }

    // MARK: Around the root element

    /// Before the root element and after it: comments, processing instructions, whitespace.
    private mutating func stepOutsideRoot() throws(XMLReaderError) -> XMLEvent? {
        let before = phase == .prolog
        while true {
            skipWhitespace()
            guard position < bytes.count else {
                // Whitespace up to the end of what a fed reader has so far: more may come.
                if !isComplete { return nil }
                guard !before else { throw malformed("the document has no root element") }
                phase = .finished
                return nil
            }
            if isAt("<!--") { try skipComment(); continue }
            if isAt("<?") { return try readProcessingInstruction() }
            if isAt("<!") { throw markupDeclarationFailure() }
            if isAt("</") { throw malformed(before ? "an end tag comes before the root element" : "an end tag comes after the root element ended") }
            guard bytes[position] == .lessThan else {
                throw malformed(before ? "text comes before the root element" : "text comes after the root element ended")
            }
            guard before else { throw malformed("a second root element begins after the first ended") }
            phase = .content
            return try readStartTag()
        }
    }

    // MARK: Inside the root element

    private mutating func stepInsideRoot() throws(XMLReaderError) -> XMLEvent? {
        while true {
            try readCharacterData()
            guard position < bytes.count else {
                throw malformed("the document ends inside <\(open.last.map { ServerNumber.quoted($0.qualifiedName) } ?? "")>")
            }
            // Comments and CDATA sections are part of the text around them.
            if isAt("<!--") { try skipComment(); continue }
            if isAt("<![CDATA[") { try readCDATA(); continue }
            if !text.isEmpty {
                defer { text.removeAll(keepingCapacity: true) }
                return .text(String(decoding: text, as: UTF8.self))
            }
            if isAt("</") { return try readEndTag() }
            if isAt("<?") { return try readProcessingInstruction() }
            if isAt("<!") { throw markupDeclarationFailure() }
            return try readStartTag()
        }
    }

    /// Text up to the next `<` (or the end), into `text`.
    private mutating func readCharacterData() throws(XMLReaderError) {
        while position < bytes.count {
            let run = position
            while position < bytes.count, !Self.endsPlainText(bytes[position]) { position += 1 }
            text.append(contentsOf: bytes[run..<position])
            guard position < bytes.count else { return }
            switch bytes[position] {
            case .lessThan:
                return
            case .ampersand:
                Self.append(try readReference(), to: &text)
            case .carriageReturn:
                text.append(.lineFeed)
                position += 1
                if position < bytes.count, bytes[position] == .lineFeed { position += 1 }
            default: // ]
                if isAt("]]>") { throw malformed("]]> appears in text outside a CDATA section") }
                text.append(bytes[position])
                position += 1
            }
        }
    }

    private static func endsPlainText(_ byte: UInt8) -> Bool {
        byte == .lessThan || byte == .ampersand || byte == .carriageReturn || byte == .closingBracket
    }

    /// `<![CDATA[...]]>`: its bytes are text as they stand.
    private mutating func readCDATA() throws(XMLReaderError) {
        let start = position
        position += "<![CDATA[".utf8.count
        guard let end = find("]]>", from: position) else { throw malformed("a CDATA section is not closed by ]]>", at: start) }
        var index = position
        while index < end {
            if bytes[index] == .carriageReturn {
                text.append(.lineFeed)
                if index + 1 < end, bytes[index + 1] == .lineFeed { index += 1 }
            } else {
                text.append(bytes[index])
            }
            index += 1
        }
        position = end + 3
    }

    // MARK: Tags

    private mutating func readStartTag() throws(XMLReaderError) -> XMLEvent {
        let start = position
        position += 1
        let tag = try readName(in: "a start tag")
        guard open.count < maximumDepth else { throw XMLReaderError(.tooDeep(limit: maximumDepth), line: line(at: start)) }
        var attributes: [(name: Range<Int>, value: String)] = []
        var isEmpty = false
        while true {
            let spaced = skipWhitespace()
            guard position < bytes.count else { throw malformed("the document ends inside the tag <\(shown(tag))", at: start) }
            if bytes[position] == .greaterThan { position += 1; break }
            if isAt("/>") { position += 2; isEmpty = true; break }
            guard spaced else { throw malformed("the tag <\(shown(tag))> needs whitespace before an attribute, or > or />") }
            guard let name = scanName() else { throw malformed("an attribute of <\(shown(tag))> has no valid name") }
            skipWhitespace()
            guard consume("=") else { throw malformed("the attribute \(shown(name)) of <\(shown(tag))> has no value") }
            skipWhitespace()
            attributes.append((name, try readAttributeValue()))
        }

        namespaces.enter()
        let name: XMLName
        var resolved: [XMLAttribute] = []
        do throws(XMLReaderError) {
            try declareNamespaces(attributes, in: tag)
            name = try expandedName(tag, isAttribute: false)
            for attribute in attributes where !isNamespaceDeclaration(attribute.name) {
                resolved.append(XMLAttribute(name: try expandedName(attribute.name, isAttribute: true), value: attribute.value))
            }
        } catch {
            throw XMLReaderError(error.reason, line: line(at: start))
        }
        if resolved.count > 1, Set(resolved.map(\.name)).count < resolved.count {
            throw malformed("the tag <\(shown(tag))> has two attributes with the same namespace and name", at: start)
        }
        if isEmpty {
            namespaces.leave()
            pendingEnd = name
        } else {
            open.append(name)
        }
        return .start(name, attributes: resolved)
    }

    private mutating func readEndTag() throws(XMLReaderError) -> XMLEvent {
        let start = position
        position += 2
        let tag = try readName(in: "an end tag")
        skipWhitespace()
        guard consume(">") else { throw malformed("the end tag </\(shown(tag)) is not closed by >", at: start) }
        guard let element = open.last else { throw malformed("the end tag </\(shown(tag))> closes nothing", at: start) }
        guard spells(element, tag) else {
            throw malformed("<\(ServerNumber.quoted(element.qualifiedName))> is closed by </\(shown(tag))>", at: start)
        }
        open.removeLast()
        namespaces.leave()
        if open.isEmpty { phase = .epilog }
        return .end(element)
    }

    /// Whether the name at `tag` is `element`'s as its start tag wrote it, prefix and all.
    private func spells(_ element: XMLName, _ tag: Range<Int>) -> Bool {
        let written = bytes[tag]
        guard let prefix = element.prefix else { return written.elementsEqual(element.localName.utf8) }
        let colon = tag.lowerBound + prefix.utf8.count
        return colon < tag.upperBound && bytes[colon] == .colon && bytes[tag.lowerBound..<colon].elementsEqual(prefix.utf8)
            && bytes[(colon + 1)..<tag.upperBound].elementsEqual(element.localName.utf8)
    }

    /// A quoted attribute value, references replaced and each tab or line end read as a space
    /// (XML's attribute-value normalisation for CDATA attributes).
    private mutating func readAttributeValue() throws(XMLReaderError) -> String {
        let start = position
        guard position < bytes.count, bytes[position] == .quote || bytes[position] == .apostrophe else {
            throw malformed("an attribute value is not in quotes")
        }
        let quote = bytes[position]
        position += 1
        var value: [UInt8] = []
        while true {
            guard position < bytes.count else { throw malformed("an attribute value is not closed", at: start) }
            let byte = bytes[position]
            switch byte {
            case quote:
                position += 1
                return String(decoding: value, as: UTF8.self)
            case .lessThan:
                throw malformed("an attribute value holds a <")
            case .ampersand:
                Self.append(try readReference(), to: &value)
            case .carriageReturn:
                value.append(.space)
                position += 1
                if position < bytes.count, bytes[position] == .lineFeed { position += 1 }
            case .tab, .lineFeed:
                value.append(.space)
                position += 1
            default:
                value.append(byte)
                position += 1
            }
        }
    }

    // MARK: Namespaces

    private func isNamespaceDeclaration(_ name: Range<Int>) -> Bool {
        bytes[name].elementsEqual("xmlns".utf8) || bytes[name].starts(with: "xmlns:".utf8)
    }

    /// Applies the `xmlns` and `xmlns:p` attributes of a start tag (whose scope is entered),
    /// after checking that no attribute is written twice.
    private mutating func declareNamespaces(_ attributes: [(name: Range<Int>, value: String)], in tag: Range<Int>) throws(XMLReaderError) {
        if attributes.count > 1 {
            var seen = Set<ArraySlice<UInt8>>()
            for attribute in attributes where !seen.insert(bytes[attribute.name]).inserted {
                throw malformed("the attribute \(shown(attribute.name)) appears twice in <\(shown(tag))>")
            }
        }
        for attribute in attributes where isNamespaceDeclaration(attribute.name) {
            let uri = attribute.value
            let prefixStart = attribute.name.lowerBound + "xmlns:".utf8.count
            guard prefixStart <= attribute.name.upperBound else {
                // xmlns="...": the default namespace, "" for none.
                guard uri != XMLNamespaces.xml, uri != XMLNamespaces.xmlns else {
                    throw malformed("the default namespace cannot be \(uri)")
                }
                namespaces.declare(prefix: "", namespace: uri)
                continue
            }
            let prefix = prefixStart..<attribute.name.upperBound
            guard isNCName(prefix) else { throw malformed("\(shown(attribute.name)) declares no valid prefix") }
            let name = string(prefix)
            switch name {
            case "xmlns":
                throw malformed("the prefix xmlns cannot be declared")
            case "xml":
                guard uri == XMLNamespaces.xml else { throw malformed("the prefix xml cannot be bound to another namespace") }
            default:
                guard !uri.isEmpty else { throw malformed("the prefix \(ServerNumber.quoted(name)) is declared with an empty namespace") }
                guard uri != XMLNamespaces.xml, uri != XMLNamespaces.xmlns else {
                    throw malformed("the prefix \(ServerNumber.quoted(name)) cannot be bound to \(uri)")
                }
            }
            namespaces.declare(prefix: name, namespace: uri)
        }
    }

    /// `prefix:local` resolved with the declarations in scope. An unprefixed element is in
    /// the default namespace; an unprefixed attribute is in none.
    private func expandedName(_ qualified: Range<Int>, isAttribute: Bool) throws(XMLReaderError) -> XMLName {
        guard let colon = bytes[qualified].firstIndex(of: .colon) else {
            return XMLName(isAttribute ? "" : namespaces.namespace(of: "") ?? "", string(qualified))
        }
        let prefix = qualified.lowerBound..<colon, local = (colon + 1)..<qualified.upperBound
        guard isNCName(prefix), isNCName(local) else {
            throw malformed("\(shown(qualified)) is not a name with at most one prefix (prefix:name)")
        }
        let name = string(prefix)
        guard name != "xmlns" else { throw malformed("\(shown(qualified)) uses the prefix xmlns, which only declares namespaces") }
        guard let namespace = namespaces.namespace(of: name) else {
            throw malformed("the prefix of \(shown(qualified)) is not declared")
        }
        return XMLName(namespace, string(local), prefix: name)
    }

    /// A name without a colon that starts with a name-start character.
    private func isNCName(_ range: Range<Int>) -> Bool {
        guard let first = scalar(at: range.lowerBound), range.lowerBound < range.upperBound,
              first.value != UInt32(UInt8.colon), XMLCharacters.isNameStart(first.value) else { return false }
        return !bytes[range].contains(.colon)
    }

    // MARK: Other markup

    /// `<?target data?>`. The target `xml` is the XML declaration, allowed only at the start.
    private mutating func readProcessingInstruction() throws(XMLReaderError) -> XMLEvent {
        let start = position
        position += 2
        let target = try readName(in: "a processing instruction")
        let name = string(target)
        guard name.lowercased() != "xml" else { throw malformed("an XML declaration appears after the start of the document", at: start) }
        guard !name.contains(":") else { throw malformed("the processing instruction target \(shown(target)) holds a colon", at: start) }
        if consume("?>") { return .processingInstruction(target: name, data: "") }
        guard skipWhitespace() else { throw malformed("the processing instruction <?\(shown(target)) needs whitespace or ?> after its target", at: start) }
        guard let end = find("?>", from: position) else { throw malformed("the processing instruction <?\(shown(target)) is not closed by ?>", at: start) }
        let data = String(decoding: bytes[position..<end], as: UTF8.self)
        position = end + 2
        return .processingInstruction(target: name, data: data)
    }

    /// `<!-- ... -->`, which may not hold `--`.
    private mutating func skipComment() throws(XMLReaderError) {
        let start = position
        position += "<!--".utf8.count
        guard let dashes = find("--", from: position) else { throw malformed("a comment is not closed by -->", at: start) }
        guard dashes + 2 < bytes.count, bytes[dashes + 2] == .greaterThan else { throw malformed("a comment holds --", at: dashes) }
        position = dashes + 3
    }

    /// `<!` that starts neither a comment nor (in content) a CDATA section: a DOCTYPE, an
    /// entity or element declaration outside any DTD, or nothing XML knows.
    private func markupDeclarationFailure() -> XMLReaderError {
        let doctype = "<!DOCTYPE".utf8
        if bytes[position...].count >= doctype.count,
           zip(bytes[position...], doctype).allSatisfy({ $0 & 0xDF == $1 & 0xDF }) {
            return XMLReaderError(.doctype, line: line(at: position))
        }
        return malformed(phase == .content ? "<! starts neither a comment nor a CDATA section" : "<! starts no comment")
    }

    /// `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`, in that order.
    private mutating func readDeclaration() throws(XMLReaderError) {
        let start = position
        position += "<?xml".utf8.count
        var spaced = skipWhitespace()
        guard spaced, let version = try readPseudoAttribute("version") else { throw malformed("the XML declaration does not begin with a version", at: start) }
        let minor = version.utf8.dropFirst(2)
        guard version.hasPrefix("1."), !minor.isEmpty, minor.allSatisfy(Self.isDigit) else {
            throw malformed("the XML declaration names version \(ServerNumber.quoted(version)), not 1.x", at: start)
        }
        spaced = skipWhitespace()
        if spaced, let encoding = try readPseudoAttribute("encoding") {
            guard let first = encoding.utf8.first, Self.isLetter(first),
                  encoding.utf8.allSatisfy({ Self.isLetter($0) || Self.isDigit($0) || $0 == .dot || $0 == .underscore || $0 == .hyphen }) else {
                throw malformed("the XML declaration names the encoding \(ServerNumber.quoted(encoding)), which is no encoding name", at: start)
            }
            guard Self.utf8Names.contains(encoding.lowercased()) else {
                throw XMLReaderError(.declaredEncoding(encoding), line: line(at: start))
            }
            spaced = skipWhitespace()
        }
        if spaced, let standalone = try readPseudoAttribute("standalone") {
            guard standalone == "yes" || standalone == "no" else { throw malformed("the XML declaration's standalone is neither yes nor no", at: start) }
            skipWhitespace()
        }
        guard consume("?>") else {
            throw malformed("the XML declaration holds more than version, encoding and standalone, or is not closed by ?>", at: start)
        }
    }

    /// Encodings a document may declare: the ones whose bytes are UTF-8 as they stand.
    static let utf8Names: Set<String> = ["utf-8", "utf8", "us-ascii", "ascii"]

    /// `name="value"` or `name='value'` in the XML declaration, nil when `name` is not next.
    private mutating func readPseudoAttribute(_ name: String) throws(XMLReaderError) -> String? {
        guard isAt(name) else { return nil }
        position += name.utf8.count
        skipWhitespace()
        guard consume("=") else { throw malformed("the XML declaration's \(name) has no value") }
        skipWhitespace()
        guard position < bytes.count, bytes[position] == .quote || bytes[position] == .apostrophe else {
            throw malformed("the XML declaration's \(name) is not in quotes")
        }
        let quote = bytes[position]
        position += 1
        guard let end = bytes[position...].firstIndex(of: quote) else { throw malformed("the XML declaration's \(name) is not closed") }
        defer { position = end + 1 }
        return string(position..<end)
    }

    // MARK: References

    /// After `&`: one of the five predefined entities or a character reference (`&#233;`,
    /// `&#xE9;`), as the character it stands for. Every other entity would need a DTD.
    private mutating func readReference() throws(XMLReaderError) -> Unicode.Scalar {
        let start = position
        position += 1
        if consume("#") {
            let hex = consume("x")
            let radix: UInt32 = hex ? 16 : 10
            var value: UInt32 = 0, digits = 0
            while position < bytes.count, let digit = Self.digitValue(bytes[position], hex: hex) {
                // Past U+10FFFF the value stops growing: no overflow, and still no character.
                value = min(value * radix + digit, 0x110000)
                digits += 1
                position += 1
            }
            guard digits > 0, consume(";") else {
                throw malformed("a character reference is neither &#digits; nor &#xhex-digits;", at: start)
            }
            guard let scalar = Unicode.Scalar(value), XMLCharacters.isAllowed(scalar) else {
                throw malformed("a character reference stands for \(XMLCharacters.shown(value)), which XML does not allow", at: start)
            }
            return scalar
        }
        guard let name = scanName(), consume(";") else {
            throw malformed("an & starts no reference (a literal & is written &amp;)", at: start)
        }
        switch string(name) {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "apos": return "'"
        case "quot": return "\""
        default: throw malformed("the entity &\(shown(name)); is not one of XML's five (a DTD would be needed, and none is read)", at: start)
        }
    }

    private static func digitValue(_ byte: UInt8, hex: Bool) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f") where hex: UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F") where hex: UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private static func append(_ scalar: Unicode.Scalar, to buffer: inout [UInt8]) {
        UTF8.encode(scalar) { buffer.append($0) }
    }

    // MARK: Names and bytes

    /// A name (letters, digits, `-`, `.`, `_`, `:` and most non-ASCII characters, not starting
    /// with a digit, `-` or `.`), as its place in the input.
    private mutating func readName(in context: String) throws(XMLReaderError) -> Range<Int> {
        guard let name = scanName() else { throw malformed("\(context) has no valid name") }
        return name
    }

    private mutating func scanName() -> Range<Int>? {
        let start = position
        guard let first = scalar(at: position), XMLCharacters.isNameStart(first.value) else { return nil }
        position += first.length
        while let next = scalar(at: position), XMLCharacters.isNameCharacter(next.value) { position += next.length }
        return start..<position
    }

    /// Whether the byte at `index` continues a name (the end of the input does not).
    private func isNameByte(at index: Int) -> Bool {
        guard let next = scalar(at: index) else { return false }
        return XMLCharacters.isNameCharacter(next.value)
    }

    /// The character starting at `index` and how many bytes it takes. The input is known to
    /// be valid UTF-8, so a lead byte tells the length.
    private func scalar(at index: Int) -> (value: UInt32, length: Int)? {
        guard index >= 0, index < bytes.count else { return nil }
        let lead = bytes[index]
        if lead < 0x80 { return (UInt32(lead), 1) }
        let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
        guard index + length <= bytes.count else { return nil }
        var value = UInt32(lead & (0xFF >> (length + 1)))
        for k in 1..<length { value = value << 6 | UInt32(bytes[index + k] & 0x3F) }
        return (value, length)
    }

    /// Skips XML whitespace (space, tab, CR, LF); whether there was any.
    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = position
        while position < bytes.count, Self.isWhitespace(bytes[position]) { position += 1 }
        return position > start
    }

    private func isAt(_ literal: String) -> Bool { bytes[position...].starts(with: literal.utf8) }

    private mutating func consume(_ literal: String) -> Bool {
        guard isAt(literal) else { return false }
        position += literal.utf8.count
        return true
    }

    /// Where `literal` (a few bytes) next appears from `start`.
    private func find(_ literal: String, from start: Int) -> Int? {
        let needle = Array(literal.utf8)
        guard let first = needle.first, bytes.count >= needle.count else { return nil }
        var index = start
        while index <= bytes.count - needle.count {
            if bytes[index] == first, bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    private func string(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

    /// Input quoted in a message: shortened, control characters escaped.
    private func shown(_ range: Range<Int>) -> String {
        ServerNumber.quoted(String(decoding: bytes[range.lowerBound..<min(range.upperBound, range.lowerBound + 200)], as: UTF8.self))
    }

    private func malformed(_ message: String, at index: Int? = nil) -> XMLReaderError {
        XMLReaderError(.malformed(message), line: line(at: index ?? position))
    }

    /// Counted for an error, and by a fed reader for the bytes it lets go (each once).
    private func line(at index: Int) -> Int {
        var lines = linesBefore + 1
        for byte in bytes[..<min(index, bytes.count)] where byte == .lineFeed { lines += 1 }
        return lines
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == .space || byte == .tab || byte == .lineFeed || byte == .carriageReturn
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }

    /// Refuses input that is not UTF-8 or holds a character XML does not allow, before any
    /// markup is read: the rest of the reader can then trust every byte sequence.
    /// Lines are counted from the start of `bytes`.
    private static func checkCharacters(_ bytes: some Collection<UInt8>, atStart: Bool) throws(XMLReaderError) {
        if atStart, bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw XMLReaderError(.notUTF8("it starts with a UTF-16 byte-order mark"), line: 1)
        }
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var line = 1
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar) where scalar == "\n":
                line += 1
            case .scalarValue(let scalar) where scalar.value == 0:
                throw XMLReaderError(.notUTF8("it holds NUL bytes"), line: line)
            case .scalarValue(let scalar) where !XMLCharacters.isAllowed(scalar):
                throw XMLReaderError(.malformed("it holds \(XMLCharacters.shown(scalar.value)), which XML does not allow"), line: line)
            case .scalarValue:
                continue
            case .emptyInput:
                return
            case .error:
                throw XMLReaderError(.notUTF8("line \(line) holds bytes that are not UTF-8"), line: line)
            }
        }
    }
}

extension UInt8 {
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let lineFeed = UInt8(ascii: "\n")
    fileprivate static let carriageReturn = UInt8(ascii: "\r")
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let apostrophe = UInt8(ascii: "'")
    fileprivate static let ampersand = UInt8(ascii: "&")
    fileprivate static let lessThan = UInt8(ascii: "<")
    fileprivate static let greaterThan = UInt8(ascii: ">")
    fileprivate static let closingBracket = UInt8(ascii: "]")
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let dot = UInt8(ascii: ".")
    fileprivate static let underscore = UInt8(ascii: "_")
    fileprivate static let hyphen = UInt8(ascii: "-")
}
