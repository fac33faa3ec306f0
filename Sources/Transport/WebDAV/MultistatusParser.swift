import Platform
/// Reads a WebDAV `207 Multi-Status` body (RFC 4918 §14.16) into one `Response` per href.
///
/// Elements are matched by namespace URI and local name, never by prefix: wsgidav writes `ns0:`, Nextcloud `d:` and `oc:`, others a default
/// namespace. Only properties from propstats with a 2xx status are kept, so a property the
/// server does not have (a 404 propstat) is simply absent.
///
/// The XML is read by `XMLReader`: UTF-8 only, no DTD (so no entity expansion), at most
/// `maximumDepth` levels. Not Sendable: one parse, one thread.
public final class MultistatusParser {
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
        var reader: XMLReader
        do throws(XMLReaderError) {
            reader = try XMLReader(bytes, maximumDepth: maximumDepth)
        } catch {
            throw violation(error)
        }
        var responses: [Response] = []
        let parser = MultistatusParser { responses.append($0) }
        while try parser.take(reader: &reader) {}
        return responses
    }

    /// A multistatus read as it arrives (`ResponseSink.stream`): each response goes to `each`
    /// as soon as it has ended, and no more than `lookahead` bytes of the reply are held.
    /// `each` returns false to read no further; a fault it throws ends the exchange too.
    public final class Stream: ReplyReader {
        private var reader = XMLReader(lookahead: Stream.lookahead, maximumDepth: MultistatusParser.maximumDepth)
        private let parser: MultistatusParser
        private let outcome: Outcome
        private var ended = false

        /// What `each` said: a fault, or to read no further.
        private final class Outcome {
            var failure: (any Error)?
            var isStopped = false
        }

        /// Why the reply was not read to its end: the reply's fault, or `each`'s.
        public var failure: (any Error)? { outcome.failure }
        /// `each` asked to read no further.
        public var isStopped: Bool { outcome.isStopped }

        /// No element, text or tag of a multistatus comes near this.
        static let lookahead = 256 << 10
        /// A listing of a few million names; a reply that goes on past this is refused rather
        /// than read for ever.
        static let longest: Int64 = 1 << 30
        private let longest: Int64
        private var received: Int64 = 0

        public convenience init(_ each: @escaping (Response) throws -> Bool) {
            self.init(longest: Self.longest, each)
        }

        init(longest: Int64, _ each: @escaping (Response) throws -> Bool) {
            self.longest = longest
            let outcome = Outcome()
            self.outcome = outcome
            parser = MultistatusParser { response in
                do { if try !each(response) { outcome.isStopped = true } } catch { outcome.failure = error }
            }
        }

        public func accepts(status: Int) -> Bool { status == 207 }

        public func read(_ bytes: UnsafeRawBufferPointer) -> Bool {
            received += Int64(bytes.count)
            guard received <= longest else {
                outcome.failure = ProtocolViolation("the server's WebDAV reply goes on past \(longest) bytes, more than any listing needs")
                return false
            }
            reader.feed(bytes)
            drain()
            return failure == nil && !isStopped
        }

        /// After the exchange: throws the fault that ended it early, else reads what is left.
        /// True when every response was read, false when `each` stopped the reading.
        public func end() throws -> Bool {
            if failure == nil, !isStopped {
                reader.finish()
                drain()
                if failure == nil, !isStopped, !ended { outcome.failure = ProtocolViolation("the server's WebDAV reply ends before its multistatus does") }
            }
            if let failure { throw failure }
            return !isStopped
        }

        private func drain() {
            do throws(ProtocolViolation) {
                while failure == nil, !isStopped, !ended {
                    // No event: the multistatus has ended, or the reader waits for more of it.
                    guard try parser.take(reader: &reader) else { ended = !reader.isWaiting; return }
                }
            } catch {
                outcome.failure = error
            }
        }
    }

    /// Reads the reader's next event; false when it has none (see `XMLReader.next()`).
    private func take(reader: inout XMLReader) throws(ProtocolViolation) -> Bool {
        let event: XMLEvent?
        do throws(XMLReaderError) { event = try reader.next() } catch { throw Self.violation(error) }
        switch event {
        case .start(let element, _)?:
            try start(element)
        case .end(let element)?:
            try end(element)
        case .text(let text)?:
            self.text += text
        case .processingInstruction?:
            throw ProtocolViolation("the server's WebDAV reply carries a processing instruction, which a multistatus never needs")
        case nil:
            return false
        }
        return true
    }

    /// What the reader found wrong, said of the server's reply.
    private static func violation(_ error: XMLReaderError) -> ProtocolViolation {
        switch error.reason {
        case .notUTF8(let detail):
            ProtocolViolation("the server's WebDAV reply is not UTF-8 text (\(detail))")
        case .declaredEncoding(let name):
            ProtocolViolation("the server's WebDAV reply declares the encoding `\(ServerNumber.quoted(name))`; only UTF-8 is read")
        case .doctype:
            // A multistatus never needs a DTD; refusing one keeps entity expansion tricks out.
            ProtocolViolation("the server's WebDAV reply carries a DTD, which a multistatus never needs")
        case .tooDeep(let limit):
            ProtocolViolation("the server's WebDAV reply nests elements more than \(limit) deep")
        case .malformed(let detail):
            ProtocolViolation("the server's WebDAV reply is not well-formed XML (line \(error.line): \(detail))")
        }
    }

    // MARK: Parsing state

    /// A multistatus needs about eight levels; a property may hold a little structure.
    static let maximumDepth = 64

    private var stack: [XMLName] = []
    private var text = ""
    /// Where each response goes once it has ended.
    private let found: (Response) -> Void
    private var current: Response?

    // The propstat being read: its properties are kept only if its status is 2xx.
    private var propstatProperties: [PropertyName: String] = [:]
    private var propstatIsCollection = false
    private var propstatChecksums: [String] = []
    private var propstatStatus: Int?
    /// Stack depth of the `<prop>` element while inside one.
    private var propDepth: Int?
    private var currentProperty: PropertyName?

    private init(_ found: @escaping (Response) -> Void) { self.found = found }

    private func start(_ element: XMLName) throws(ProtocolViolation) {
        let dav = PropertyName.dav
        if stack.isEmpty {
            guard element.is(dav, "multistatus") else {
                throw ProtocolViolation("the server's WebDAV reply starts with <\(WebDAVPath.shown(element.qualifiedName))> (namespace \"\(WebDAVPath.shown(element.namespace))\"), not DAV:multistatus")
            }
        }
        let parent = stack.last
        stack.append(element)
        text = ""

        if let depth = propDepth {
            if stack.count == depth + 1 {
                currentProperty = PropertyName(element.namespace, element.localName)
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

    private func end(_ element: XMLName) throws(ProtocolViolation) {
        guard stack.popLast() != nil else { return }
        let parent = stack.last
        let value = text.trimmingWhitespace()
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

        switch (element.namespace, element.localName) {
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
                guard !response.href.isEmpty else { throw ProtocolViolation("the server's WebDAV reply has a <response> without an <href>") }
                found(response)
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

extension XMLName {
    fileprivate func `is`(_ namespace: String, _ localName: String) -> Bool {
        self.namespace == namespace && self.localName == localName
    }
}
