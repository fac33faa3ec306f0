import Foundation
import TestSupport
import Testing
@testable import Transport

/// What wsgidav (the reference server) sends: `ns0:`/`ns1:` prefixes, a 404 propstat for
/// what a folder lacks, and empty elements for what a file lacks.
private let wsgidavListing = """
<?xml version="1.0" encoding="utf-8" ?>
<ns0:multistatus xmlns:ns0="DAV:" xmlns:ns1="http://owncloud.org/ns"><ns0:response><ns0:href>/dav/alice/Sub%20dir/</ns0:href><ns0:propstat><ns0:prop><ns0:resourcetype><ns0:collection /></ns0:resourcetype><ns0:getlastmodified>Sun, 29 Nov 2026 14:21:38 GMT</ns0:getlastmodified><ns0:quota-available-bytes>82420391936</ns0:quota-available-bytes><ns0:quota-used-bytes>6</ns0:quota-used-bytes></ns0:prop><ns0:status>HTTP/1.1 200 OK</ns0:status></ns0:propstat><ns0:propstat><ns0:prop><ns0:getcontentlength /><ns0:getetag /><ns0:getcontenttype /><ns1:checksums /></ns0:prop><ns0:status>HTTP/1.1 404 Not Found</ns0:status></ns0:propstat></ns0:response><ns0:response><ns0:href>/dav/alice/Sub%20dir/%C3%A9%20%231.txt</ns0:href><ns0:propstat><ns0:prop><ns0:resourcetype /><ns0:getcontentlength>6</ns0:getcontentlength><ns0:getetag>f82018-18ec8a036b8f4b77-6</ns0:getetag><ns0:getlastmodified>Sun, 29 Nov 2026 14:21:38 GMT</ns0:getlastmodified><ns0:getcontenttype>text/plain; charset=utf-8</ns0:getcontenttype><ns0:quota-available-bytes /><ns0:quota-used-bytes /><ns1:checksums><ns1:checksum>SHA256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03</ns1:checksum></ns1:checksums></ns0:prop><ns0:status>HTTP/1.1 200 OK</ns0:status></ns0:propstat></ns0:response></ns0:multistatus>
"""

/// What Nextcloud sends: `d:`/`oc:`/`s:` prefixes, quoted ETags, several checksums in one
/// element, and a negative quota meaning "unlimited".
private let nextcloudListing = """
<?xml version="1.0"?>
<d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
 <d:response>
  <d:href>/remote.php/dav/files/alice%40example.com/Photos/</d:href>
  <d:propstat>
   <d:prop>
    <d:resourcetype><d:collection/></d:resourcetype>
    <d:getetag>&quot;6501c5d7a4b3e&quot;</d:getetag>
    <d:getlastmodified>Wed, 13 Sep 2023 14:48:23 GMT</d:getlastmodified>
    <d:quota-available-bytes>-3</d:quota-available-bytes>
    <d:quota-used-bytes>1048576</d:quota-used-bytes>
   </d:prop>
   <d:status>HTTP/1.1 200 OK</d:status>
  </d:propstat>
  <d:propstat>
   <d:prop><d:getcontentlength/><d:getcontenttype/><oc:checksums/></d:prop>
   <d:status>HTTP/1.1 404 Not Found</d:status>
  </d:propstat>
 </d:response>
 <d:response>
  <d:href>/remote.php/dav/files/alice%40example.com/Photos/Stra%c3%9fe%20%26%20Meer.jpg</d:href>
  <d:propstat>
   <d:prop>
    <d:resourcetype/>
    <d:getcontentlength>2048</d:getcontentlength>
    <d:getetag>"a1b2c3"</d:getetag>
    <d:getlastmodified>Thu, 14 Sep 2023 08:00:00 GMT</d:getlastmodified>
    <d:getcontenttype>image/jpeg</d:getcontenttype>
    <oc:checksums><oc:checksum>SHA1:da39a3ee5e6b4b0d3255bfef95601890afd80709 MD5:d41d8cd98f00b204e9800998ecf8427e SHA256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855</oc:checksum></oc:checksums>
   </d:prop>
   <d:status>HTTP/1.1 200 OK</d:status>
  </d:propstat>
 </d:response>
</d:multistatus>
"""

@Suite("Multistatus parsing")
struct WebDAVMultistatusParserTests {
    typealias P = MultistatusParser.PropertyName

    @Test("reads a wsgidav reply with ns0: prefixes by namespace, keeping only 200 propstats")
    func wsgidavPrefixes() throws {
        let responses = try MultistatusParser.parse(Array(wsgidavListing.utf8))
        #expect(responses.count == 2)
        let folder = responses[0], file = responses[1]
        #expect(folder.href == "/dav/alice/Sub%20dir/")
        #expect(folder.isCollection)
        #expect(folder[P.quotaAvailable] == "82420391936")
        #expect(folder[P.quotaUsed] == "6")
        #expect(folder[P.contentLength] == nil) // only in the 404 propstat
        #expect(folder[P.etag] == nil)
        #expect(!file.isCollection)
        #expect(file[P.contentLength] == "6")
        #expect(file[P.etag] == "f82018-18ec8a036b8f4b77-6")
        #expect(file[P.contentType] == "text/plain; charset=utf-8")
        #expect(file.checksums == ["SHA256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"])
    }

    @Test("reads a Nextcloud reply with d: and oc: prefixes, splitting several checksums")
    func nextcloudPrefixes() throws {
        let responses = try MultistatusParser.parse(Array(nextcloudListing.utf8))
        #expect(responses.count == 2)
        #expect(responses[0].isCollection)
        #expect(responses[0][P.etag] == "\"6501c5d7a4b3e\"")
        #expect(responses[1].href == "/remote.php/dav/files/alice%40example.com/Photos/Stra%c3%9fe%20%26%20Meer.jpg")
        #expect(responses[1].checksums.count == 3)
        #expect(responses[1][P.contentLength] == "2048")
    }

    @Test("matches elements by namespace URI, whatever the prefix or a default namespace")
    func defaultNamespace() throws {
        let xml = """
        <multistatus xmlns="DAV:"><response><href>/dav/alice/a</href>
        <propstat><prop><getcontentlength>12</getcontentlength><x:getcontentlength xmlns:x="urn:other">99</x:getcontentlength></prop>
        <status>HTTP/1.1 200 OK</status></propstat></response></multistatus>
        """
        let responses = try MultistatusParser.parse(Array(xml.utf8))
        #expect(responses.count == 1)
        #expect(responses[0][P.contentLength] == "12")
        #expect(responses[0][P("urn:other", "getcontentlength")] == "99")
    }

    @Test("an element named like a DAV one in another namespace is not taken for it")
    func prefixIsNotNamespace() throws {
        // "d:" here is bound to a foreign namespace: this is not a multistatus at all.
        let xml = #"<d:multistatus xmlns:d="urn:not-dav"><d:response/></d:multistatus>"#
        #expect(throws: ProtocolViolation.self) { try MultistatusParser.parse(Array(xml.utf8)) }
    }

    @Test("a response with missing properties yields an entry without them")
    func missingProperties() throws {
        let xml = """
        <D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/alice/bare</D:href>
        <D:propstat><D:prop><D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>
        </D:response></D:multistatus>
        """
        let response = try #require(try MultistatusParser.parse(Array(xml.utf8)).first)
        #expect(response.properties.keys.sorted(by: { $0.name < $1.name }) == [P.resourceType])
        let item = try RemoteItem(path: "/bare", response: response)
        #expect(item.name == "bare")
        #expect(!item.isFolder)
        #expect(item.size == nil && item.etag == nil && item.lastModified == nil && item.checksum == nil && item.quota == nil)
    }

    @Test("a response-level status (a member that vanished) is reported")
    func responseStatus() throws {
        let xml = """
        <d:multistatus xmlns:d="DAV:"><d:response><d:href>/dav/alice/gone</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response></d:multistatus>
        """
        let responses = try MultistatusParser.parse(Array(xml.utf8))
        #expect(responses == [MultistatusParser.Response(href: "/dav/alice/gone", status: 404)])
    }

    @Test("malformed XML is a protocol violation that says so")
    func malformed() {
        #expect {
            try MultistatusParser.parse(Array("<d:multistatus xmlns:d=\"DAV:\"><d:response>".utf8))
        } throws: { error in
            (error as? ProtocolViolation)?.message.contains("not well-formed") == true
        }
        #expect(throws: ProtocolViolation.self) { try MultistatusParser.parse(Array("<html>502 Bad Gateway</html>".utf8)) }
        #expect(throws: ProtocolViolation.self) { try MultistatusParser.parse([]) }
    }

    @Test("a reply with a DTD is refused before any entity is expanded")
    func doctypeRefused() {
        let xml = """
        <?xml version="1.0"?><!DOCTYPE lol [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>
        <d:multistatus xmlns:d="DAV:"><d:response><d:href>&b;</d:href></d:response></d:multistatus>
        """
        #expect(throws: ProtocolViolation.self) { try MultistatusParser.parse(Array(xml.utf8)) }
    }

    @Test("a response without an href is a protocol violation")
    func missingHref() {
        let xml = #"<d:multistatus xmlns:d="DAV:"><d:response><d:propstat/></d:response></d:multistatus>"#
        #expect(throws: ProtocolViolation.self) { try MultistatusParser.parse(Array(xml.utf8)) }
    }

    @Test("turns the Nextcloud entries into items: quoted ETag, SHA-256 preferred, unlimited quota as unknown")
    func nextcloudItems() throws {
        let responses = try MultistatusParser.parse(Array(nextcloudListing.utf8))
        let root = try WebDAVPath.decodedComponents(ofURL: "https://cloud.example/remote.php/dav/files/alice@example.com/")
        let items = try responses.map { try RemoteItem(path: try WebDAVPath.remotePath(href: $0.href, rootComponents: root), response: $0) }
        #expect(items[0].path == "/Photos")
        #expect(items[0].isFolder)
        #expect(items[0].quota == Quota(availableBytes: nil, usedBytes: 1_048_576))
        #expect(items[1].path == "/Photos/Straße & Meer.jpg")
        #expect(items[1].name == "Straße & Meer.jpg")
        #expect(items[1].size == 2048)
        #expect(items[1].etag == "\"a1b2c3\"")
        #expect(items[1].contentType == "image/jpeg")
        #expect(items[1].checksum?.hasPrefix("SHA256:") == true)
        #expect(items[1].sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(items[1].lastModified == Date(timeIntervalSince1970: 1_694_678_400))
    }

    @Test("wsgidav's unquoted getetag gets the quotes its ETag header has")
    func etagHeaderForm() throws {
        let responses = try MultistatusParser.parse(Array(wsgidavListing.utf8))
        let item = try RemoteItem(path: "/Sub dir/é #1.txt", response: responses[1])
        #expect(item.etag == "\"f82018-18ec8a036b8f4b77-6\"")
        #expect(item.quota == nil) // empty quota elements on a file say nothing
        #expect(RemoteItem.headerForm(etag: "W/\"x\"") == "W/\"x\"")
        #expect(RemoteItem.headerForm(etag: "  ") == nil)
    }

    @Test("a reply nested deeper than any multistatus needs is refused, not recursed into")
    func deepNesting() {
        let depth = 100_000
        let xml = #"<d:multistatus xmlns:d="DAV:">"# + String(repeating: "<d:x>", count: depth) + String(repeating: "</d:x>", count: depth) + "</d:multistatus>"
        let error = #expect(throws: ProtocolViolation.self) { try MultistatusParser.parse(Array(xml.utf8)) }
        #expect(error?.message.contains("deep") == true, "\(error?.message ?? "")")
        // The deepest real reply still passes.
        let fine = #"<d:multistatus xmlns:d="DAV:">"# + String(repeating: "<d:x>", count: 50) + String(repeating: "</d:x>", count: 50) + "</d:multistatus>"
        #expect(throws: Never.self) { try MultistatusParser.parse(Array(fine.utf8)) }
    }

    @Test("a billion laughs is refused however it is encoded: UTF-16, UTF-7 or a byte-order mark cannot hide its DTD")
    func billionLaughsInOtherEncodings() {
        let laughs = """
            <?xml version="1.0"?><!DOCTYPE d:multistatus [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\
            <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>\
            <d:multistatus xmlns:d="DAV:"><d:response><d:href>/&d;</d:href></d:response></d:multistatus>
            """
        var utf16 = [UInt8]([0xFF, 0xFE])
        for unit in laughs.utf16 { utf16 += [UInt8(unit & 0xff), UInt8(unit >> 8)] }
        let utf16NoBOM = Array(utf16.dropFirst(2))
        let utf7 = Array(#"<?xml version="1.0" encoding="UTF-7"?>+ADw-!DOCTYPE x +AFs-+ADw-!ENTITY a +ACI-lol+ACI-+AD4-+AF0-+AD4-<d:multistatus xmlns:d="DAV:"/>"#.utf8)
        let bom8 = [0xEF, 0xBB, 0xBF] + Array(laughs.utf8)
        for body in [Array(laughs.utf8), utf16, utf16NoBOM, utf7, bom8] {
            #expect(throws: ProtocolViolation.self) { try MultistatusParser.parse(body) }
        }
    }

    @Test("sizes and quotas in a listing are plain numbers or a violation; empty means not given")
    func hostileNumbers() throws {
        func item(_ props: String) throws -> RemoteItem {
            let xml = #"<d:multistatus xmlns:d="DAV:"><d:response><d:href>/dav/alice/f</d:href><d:propstat><d:prop>"#
                + props + "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
            return try RemoteItem(path: "/f", response: try MultistatusParser.parse(Array(xml.utf8))[0])
        }
        #expect(try item("<d:getcontentlength>12</d:getcontentlength>").size == 12)
        #expect(try item("<d:getcontentlength/>").size == nil)
        #expect(try item("<d:quota-available-bytes>-3</d:quota-available-bytes><d:quota-used-bytes>5</d:quota-used-bytes>").quota
                == Quota(availableBytes: nil, usedBytes: 5))
        for bad in ["<d:getcontentlength>-1</d:getcontentlength>", "<d:getcontentlength>1e9</d:getcontentlength>",
                    "<d:getcontentlength>99999999999999999999</d:getcontentlength>", "<d:getcontentlength>12 bytes</d:getcontentlength>",
                    "<d:quota-available-bytes>-4</d:quota-available-bytes>", "<d:quota-used-bytes>inf</d:quota-used-bytes>",
                    "<d:quota-available-bytes>1.5</d:quota-available-bytes>"] {
            #expect(throws: ProtocolViolation.self, "\(bad)") { try item(bad) }
        }
        // A status line whose code is not three digits is no status: the propstat counts as 200.
        #expect(MultistatusParser.statusCode("HTTP/1.1 +200 OK") == nil)
        #expect(MultistatusParser.statusCode("HTTP/1.1 99999999999999999999 OK") == nil)
        #expect(MultistatusParser.statusCode("HTTP/1.1 404 Not Found") == 404)
    }

    @Test("a download resumes under a strong ETag, else under Last-Modified, else not at all")
    func rangeValidator() throws {
        let date = try #require(HTTPDate.milliseconds("Sun, 06 Nov 1994 08:49:37 GMT"))
        let modified = Date(timeIntervalSince1970: Double(date / 1000))
        #expect(RemoteItem(path: "/f", isFolder: false, etag: "\"abc\"", lastModified: modified).rangeValidator == "\"abc\"")
        #expect(RemoteItem(path: "/f", isFolder: false, etag: "W/\"abc\"", lastModified: modified).rangeValidator
                == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(RemoteItem(path: "/f", isFolder: false, etag: "W/\"abc\"").rangeValidator == nil)
        #expect(RemoteItem(path: "/f", isFolder: false).rangeValidator == nil)
        #expect(RemoteItem(path: "/f", isFolder: false, lastModified: Date(timeIntervalSince1970: .infinity)).rangeValidator == nil)
        #expect(WebDAVClient.strongValidator("W/\"abc\"") == nil)
        #expect(WebDAVClient.strongValidator("\"a\r\nX-Evil: 1\"") == nil)
        #expect(WebDAVClient.strongValidator("\"abc\"") == "\"abc\"")
    }

    @Test("replies FoundationXML would crash on are refused before it sees them: invalid UTF-8 in a name, a bare processing instruction")
    func fuzzFindings() throws {
        for name in ["crash-invalid-utf8-element-name", "crash-processing-instruction-without-data"] {
            let body = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Repository.root + "/Fuzz/multistatus/corpus/" + name)))
            #expect(throws: ProtocolViolation.self, "\(name)") { try MultistatusParser.parse(body) }
        }
        #expect(throws: ProtocolViolation.self) { try MultistatusParser.parse(Array(#"<d:multistatus xmlns:d="DAV:"><?x?></d:multistatus>"#.utf8)) }
        #expect(throws: ProtocolViolation.self) { try MultistatusParser.parse([0x3C, 0x64, 0xE9, 0x3E, 0x3C, 0x2F, 0x64, 0xE9, 0x3E]) }
        // The XML declaration itself stays welcome.
        #expect(throws: Never.self) { try MultistatusParser.parse(Array(#"<?xml version="1.0" encoding="UTF-8"?><d:multistatus xmlns:d="DAV:"/>"#.utf8)) }
    }

    // MARK: Read as it comes

    /// The responses of `xml` fed to a stream in pieces of `piece` bytes.
    private func streamed(_ xml: String, piece: Int, longest: Int64 = MultistatusParser.Stream.longest,
                          each: @escaping (MultistatusParser.Response) throws -> Bool = { _ in true }) throws -> [MultistatusParser.Response] {
        var found: [MultistatusParser.Response] = []
        let stream = MultistatusParser.Stream(longest: longest) { found.append($0); return try each($0) }
        let bytes = Array(xml.utf8)
        for start in stride(from: 0, to: bytes.count, by: piece) {
            let more = bytes[start..<min(start + piece, bytes.count)].withUnsafeBytes { stream.read($0) }
            if !more { break }
        }
        _ = try stream.end()
        return found
    }

    @Test("a reply read as it comes, in pieces of any size, gives the responses it gives whole")
    func streamedAsWhole() throws {
        for xml in [wsgidavListing, nextcloudListing] {
            let whole = try MultistatusParser.parse(Array(xml.utf8))
            for piece in [1, 7, 4096] { #expect(try streamed(xml, piece: piece) == whole, "pieces of \(piece)") }
        }
        // A reply longer than the lookahead is read as it comes: most of its responses are
        // handed on before it has ended.
        let entry = #"<d:response><d:href>/dav/alice/IMG_0001.jpg</d:href><d:propstat><d:prop><d:resourcetype/></d:prop>"#
            + "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>\n"
        let long = Array((#"<d:multistatus xmlns:d="DAV:">"# + String(repeating: entry, count: 5_000) + "</d:multistatus>").utf8)
        var found = 0
        let stream = MultistatusParser.Stream { _ in found += 1; return true }
        for start in stride(from: 0, to: long.count, by: 4096) {
            #expect(long[start..<min(start + 4096, long.count)].withUnsafeBytes { stream.read($0) })
        }
        #expect(found > 3_000 && found < 5_000, "\(found) of 5,000 before the end")
        #expect(try stream.end())
        #expect(found == 5_000)
    }

    @Test("read as it comes: stopped by its reader, failed by its reader, cut short, or longer than any listing, each says so")
    func streamedEnds() throws {
        // Stopped after the first response: nothing more read, and the end says it was not
        // all. (A reply shorter than the stream's lookahead is read once it has ended.)
        var seen = 0
        let stopping = MultistatusParser.Stream { _ in seen += 1; return false }
        #expect(Array(nextcloudListing.utf8).withUnsafeBytes { stopping.read($0) })
        #expect(seen == 0)
        #expect(try !stopping.end())
        #expect(seen == 1 && stopping.isStopped)

        struct Refused: Error {}
        #expect(throws: Refused.self) { try streamed(nextcloudListing, piece: 5) { _ in throw Refused() } }
        let cut = String(nextcloudListing.prefix(nextcloudListing.count / 2))
        #expect(throws: ProtocolViolation.self) { try streamed(cut, piece: 5) }
        let endless = #expect(throws: ProtocolViolation.self) { try streamed(nextcloudListing, piece: 16, longest: 100) }
        #expect(endless?.description == "the server's WebDAV reply goes on past 100 bytes, more than any listing needs")
    }
}
