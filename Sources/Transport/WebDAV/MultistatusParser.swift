import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads a WebDAV `207 Multi-Status` body (RFC 4918 §14.16) into one `Response` per href.
///
/// Namespace processing is on and elements are matched by namespace URI and local name,
/// never by prefix: wsgidav writes `ns0:`, Nextcloud `d:` and `oc:`, others a default
/// namespace. Only properties from propstats with a 2xx status are kept, so a property the
/// server does not have (a 404 propstat) is simply absent. Not Sendable: one parse, one thread.
public final class MultistatusParser: NSObject, XMLParserDelegate {
    /// One `<response>`: an href and what the server said about it.
    public struct Response: Sendable, Equatable {
        /// As the server wrote it (percent-encoded, possibly an absolute URL).
        public var href: String
        /// A response-level `<status>` (e.g. a 404 for one member), when there is one.
        public var status: Int?
        /// Text of each found property, trimmed. Structured ones are also read below.
        public var properties: [PropertyName: String]
        /// `<resourcetype>` holds `<collection/>`.
        public var isCollection: Bool
        /// Each `<oc:checksum>` inside `<oc:checksums>`, e.g. `SHA256:ab12…` (Nextcloud puts
        /// several, space-separated, in one element; they are split here).
        public var checksums: [String]

        public init(href: String, status: Int? = nil, properties: [PropertyName: String] = [:],
                    isCollection: Bool = false, checksums: [String] = []) {
            self.href = href; self.status = status; self.properties = properties
            self.isCollection = isCollection; self.checksums = checksums
        }

        public subscript(_ name: PropertyName) -> String? { properties[name] }
    }

    /// A property's expanded name: namespace URI plus local name.
    public struct PropertyName: Hashable, Sendable, CustomStringConvertible {
        public var namespace: String
        public var name: String
        public init(_ namespace: String, _ name: String) { self.namespace = namespace; self.name = name }
        public var description: String { "{\(namespace)}\(name)" }

        public static let dav = "DAV:"
        public static let owncloud = "http://owncloud.org/ns"

        public static let resourceType = PropertyName(dav, "resourcetype")
        public static let contentLength = PropertyName(dav, "getcontentlength")
        public static let etag = PropertyName(dav, "getetag")
        public static let lastModified = PropertyName(dav, "getlastmodified")
        public static let contentType = PropertyName(dav, "getcontenttype")
        public static let quotaAvailable = PropertyName(dav, "quota-available-bytes")
        public static let quotaUsed = PropertyName(dav, "quota-used-bytes")
        public static let checksums = PropertyName(owncloud, "checksums")
    }

    /// Parses a whole multistatus body.
    public static func parse(_ bytes: [UInt8]) throws(ProtocolViolation) -> [Response] {
        // A multistatus never needs a DTD; refusing one keeps entity expansion tricks out.
        // The byte search only sees a DTD in UTF-8, so other encodings go too.
        try requireUTF8(bytes)
        if containsDoctype(bytes) {
            throw ProtocolViolation("the server's WebDAV reply carries a DTD, which a multistatus never needs")
        }
        // FoundationXML dereferences NULL on a processing instruction without data
        // (`<?x?>`); a multistatus needs none beyond its XML declaration.
        if containsProcessingInstruction(bytes) {
            throw ProtocolViolation("the server's WebDAV reply carries a processing instruction, which a multistatus never needs")
        }
        let delegate = MultistatusParser()
        let parser = XMLParser(data: Data(bytes))
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        let ok = parser.parse()
        if let failure = delegate.failure { throw failure }
        guard ok else {
            let detail = parser.parserError.map { "\($0.localizedDescription)" } ?? "unknown error"
            throw ProtocolViolation("the server's WebDAV reply is not well-formed XML (line \(parser.lineNumber): \(detail))")
        }
        // Foundation's XMLParser on Linux reports success for a document that just stops:
        // a reply cut short must not pass for a shorter listing.
        guard delegate.stack.isEmpty else {
            throw ProtocolViolation("the server's WebDAV reply is not well-formed XML (it ends inside <\(WebDAVPath.shown(delegate.stack.last!.name))>)")
        }
        guard delegate.sawMultistatus else {
            throw ProtocolViolation("the server's WebDAV reply is not a DAV:multistatus document")
        }
        return delegate.responses
    }

    /// Encodings a reply may declare: the ones whose bytes are UTF-8 as they stand.
    static let utf8Names: Set<String> = ["utf-8", "utf8", "us-ascii", "ascii"]

    /// Refuses anything but UTF-8: UTF-16/32 (NUL bytes, byte-order marks) or a declared
    /// encoding (UTF-7, EBCDIC...) could spell markup in other bytes than the DTD check
    /// looks for, and FoundationXML traps on an element name that is not valid UTF-8.
    private static func requireUTF8(_ bytes: [UInt8]) throws(ProtocolViolation) {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        decoding: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar) where scalar.value == 0: throw ProtocolViolation("the server's WebDAV reply is not UTF-8 text (it holds NUL bytes)")
            case .scalarValue: continue
            case .emptyInput: break decoding
            case .error: throw ProtocolViolation("the server's WebDAV reply is not valid UTF-8")
            }
        }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw ProtocolViolation("the server's WebDAV reply is not UTF-8 text")
        }
        let head = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3).prefix(200)) : Array(bytes.prefix(200))
        guard head.starts(with: Array("<?xml".utf8)), let end = head.firstIndex(of: UInt8(ascii: ">")) else { return }
        let declaration = String(decoding: head[..<end], as: UTF8.self).lowercased()
        guard let range = declaration.range(of: "encoding") else { return }
        let rest = declaration[range.upperBound...].drop(while: { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" })
        let name = String(rest.prefix(while: { $0 != "\"" && $0 != "'" && $0 != " " && $0 != "?" }))
        guard utf8Names.contains(name) else {
            throw ProtocolViolation("the server's WebDAV reply declares the encoding `\(ServerNumber.quoted(name))`; only UTF-8 is read")
        }
    }

    /// `<?` anywhere but in an XML declaration (`<?xml ` at the start).
    private static func containsProcessingInstruction(_ bytes: [UInt8]) -> Bool {
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let declaration = bytes.count > start + 5 && bytes[start..<(start + 5)].elementsEqual("<?xml".utf8)
            && [0x20, 0x09, 0x0D, 0x0A].contains(bytes[start + 5])
        return bytes.withUnsafeBufferPointer { b in
            guard b.count >= 2 else { return false }
            for i in 0..<(b.count - 1) where b[i] == UInt8(ascii: "<") && b[i + 1] == UInt8(ascii: "?") {
                if i == start && declaration { continue }
                return true
            }
            return false
        }
    }

    private static func containsDoctype(_ bytes: [UInt8]) -> Bool {
        let needle = Array("<!DOCTYPE".utf8)
        guard bytes.count >= needle.count else { return false }
        return bytes.withUnsafeBufferPointer { b in
            for i in 0...(b.count - needle.count) where b[i] == needle[0] && b[i + 1] == needle[1] {
                var match = true
                for k in 2..<needle.count where b[i + k] & 0xDF != needle[k] & 0xDF { match = false; break }
                if match { return true }
            }
            return false
        }
    }

    // MARK: Parsing state

    private struct Element: Equatable {
        var namespace: String
        var name: String
        func `is`(_ namespace: String, _ name: String) -> Bool { self.namespace == namespace && self.name == name }
    }

    /// A multistatus needs about eight levels; a property may hold a little structure.
    static let maximumDepth = 64

    private var stack: [Element] = []
    private var text = ""
    private var responses: [Response] = []
    private var current: Response?
    private var sawMultistatus = false
    private var failure: ProtocolViolation?

    // The propstat being read: its properties are kept only if its status is 2xx.
    private var propstatProperties: [PropertyName: String] = [:]
    private var propstatIsCollection = false
    private var propstatChecksums: [String] = []
    private var propstatStatus: Int?
    /// Stack depth of the `<prop>` element while inside one.
    private var propDepth: Int?
    private var currentProperty: PropertyName?

    private override init() { super.init() }

    private func fail(_ parser: XMLParser, _ message: String) {
        if failure == nil { failure = ProtocolViolation(message) }
        parser.abortParsing()
    }

    public func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                       qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        let element = Element(namespace: namespaceURI ?? "", name: elementName)
        let dav = PropertyName.dav
        guard stack.count < Self.maximumDepth else {
            return fail(parser, "the server's WebDAV reply nests elements more than \(Self.maximumDepth) deep")
        }
        if stack.isEmpty {
            guard element.is(dav, "multistatus") else {
                return fail(parser, "the server's WebDAV reply starts with <\(WebDAVPath.shown(qName ?? elementName))> (namespace \"\(WebDAVPath.shown(element.namespace))\"), not DAV:multistatus")
            }
            sawMultistatus = true
        }
        let parent = stack.last
        stack.append(element)
        text = ""

        if let depth = propDepth {
            if stack.count == depth + 1 {
                currentProperty = PropertyName(element.namespace, element.name)
            } else if currentProperty == .resourceType, element.is(dav, "collection") {
                propstatIsCollection = true
            }
            return
        }
        if element.is(dav, "response"), parent?.is(dav, "multistatus") == true {
            current = Response(href: "")
        } else if element.is(dav, "propstat"), parent?.is(dav, "response") == true {
            propstatProperties = [:]; propstatIsCollection = false; propstatChecksums = []; propstatStatus = nil
        } else if element.is(dav, "prop"), parent?.is(dav, "propstat") == true {
            propDepth = stack.count
        }
    }

    public func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    public func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        text += String(decoding: CDATABlock, as: UTF8.self)
    }

    public func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                       qualifiedName qName: String?) {
        guard let element = stack.popLast() else { return }
        let parent = stack.last
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let dav = PropertyName.dav
        defer { text = "" }

        if let depth = propDepth {
            if stack.count == depth {
                // A direct child of <prop> ends: one property.
                if let property = currentProperty, propstatProperties[property] == nil || !value.isEmpty {
                    propstatProperties[property] = value
                }
                currentProperty = nil
            } else if stack.count == depth - 1 {
                propDepth = nil // </prop>
            } else if currentProperty == .checksums, element.is(PropertyName.owncloud, "checksum") {
                propstatChecksums += value.split(whereSeparator: \.isWhitespace).map(String.init)
            }
            if stack.count >= depth { return }
        }

        switch (element.namespace, element.name) {
        case (dav, "href") where parent?.is(dav, "response") == true:
            current?.href = value
        case (dav, "status") where parent?.is(dav, "propstat") == true:
            propstatStatus = Self.statusCode(value)
        case (dav, "status") where parent?.is(dav, "response") == true:
            current?.status = Self.statusCode(value)
        case (dav, "propstat") where parent?.is(dav, "response") == true:
            // RFC 4918 requires a status in each propstat; a missing one is read as 200.
            if (200..<300).contains(propstatStatus ?? 200) {
                current?.properties.merge(propstatProperties) { _, new in new }
                if propstatIsCollection { current?.isCollection = true }
                current?.checksums += propstatChecksums
            }
        case (dav, "response") where parent?.is(dav, "multistatus") == true:
            if let response = current {
                guard !response.href.isEmpty else { return fail(parser, "the server's WebDAV reply has a <response> without an <href>") }
                responses.append(response)
            }
            current = nil
        default:
            break
        }
    }

    /// `HTTP/1.1 404 Not Found` → 404: three digits, nothing else.
    static func statusCode(_ line: String) -> Int? {
        let parts = line.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].utf8.count == 3,
              parts[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let code = ServerNumber.value(of: parts[1]) else { return nil }
        return Int(code)
    }
}
