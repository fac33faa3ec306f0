import Testing
@testable import Transport

private func events(_ xml: String, maximumDepth: Int = XMLReader.defaultMaximumDepth) throws(XMLReaderError) -> [XMLEvent] {
    try events(Array(xml.utf8), maximumDepth: maximumDepth)
}

/// The events of a whole document. Each document is also fed to a reader in pieces of 1 and
/// 3 bytes (of 4093 when it is long), looking ahead as far as the longest event read whole needed: it must read the
/// same events, or refuse the document too (not always for the same reason: a whole
/// document's characters are checked before its markup, a fed one's as they come).
private func events(_ bytes: [UInt8], maximumDepth: Int = XMLReader.defaultMaximumDepth) throws(XMLReaderError) -> [XMLEvent] {
    var events: [XMLEvent] = []
    var longest = 1
    let pieces = bytes.count < 1 << 16 ? [1, 3] : [4093]
    do throws(XMLReaderError) {
        var reader = try XMLReader(bytes, maximumDepth: maximumDepth)
        var last = 0
        while let event = try reader.next() {
            events.append(event)
            longest = max(longest, reader.offset - last)
            last = reader.offset
        }
    } catch {
        for piece in pieces {
            #expect(throws: XMLReaderError.self, "fed in pieces of \(piece)") { try fed(bytes, piece: piece, lookahead: 16, maximumDepth: maximumDepth) }
        }
        throw error
    }
    for piece in pieces {
        #expect(try fed(bytes, piece: piece, lookahead: longest, maximumDepth: maximumDepth) == events, "fed in pieces of \(piece)")
    }
    return events
}

/// The events of a document fed in pieces of `piece` bytes, read after each.
private func fed(_ bytes: [UInt8], piece: Int, lookahead: Int, maximumDepth: Int = XMLReader.defaultMaximumDepth) throws(XMLReaderError) -> [XMLEvent] {
    var reader = XMLReader(lookahead: lookahead, maximumDepth: maximumDepth)
    var events: [XMLEvent] = []
    for start in stride(from: 0, to: bytes.count, by: piece) {
        bytes[start..<min(start + piece, bytes.count)].withUnsafeBytes { reader.feed($0) }
        while let event = try reader.next() { events.append(event) }
    }
    reader.finish()
    while let event = try reader.next() { events.append(event) }
    return events
}

/// All the text of a document, in order.
private func text(_ xml: String) throws -> String {
    try events(xml).map { if case .text(let text) = $0 { text } else { "" } }.joined()
}

/// The start tags' names and attributes.
private func starts(_ xml: String) throws -> [(name: XMLName, attributes: [XMLAttribute])] {
    try events(xml).compactMap { if case .start(let name, let attributes) = $0 { (name, attributes) } else { nil } }
}

/// Why the reader refuses a document; nil when it does not.
private func refusal(_ xml: String, maximumDepth: Int = XMLReader.defaultMaximumDepth) -> XMLReaderError.Reason? {
    refusal(Array(xml.utf8), maximumDepth: maximumDepth)
}

private func refusal(_ bytes: [UInt8], maximumDepth: Int = XMLReader.defaultMaximumDepth) -> XMLReaderError.Reason? {
    do {
        _ = try events(bytes, maximumDepth: maximumDepth)
        return nil
    } catch {
        return error.reason
    }
}

private func isMalformed(_ reason: XMLReaderError.Reason?) -> Bool {
    if case .malformed = reason { true } else { false }
}

@Suite("XML reader")
struct XMLReaderTests {
    @Test("the five predefined entities and character references read as the characters they stand for, in text and attributes")
    func references() throws {
        #expect(try text("<a>&lt;b&gt; &amp; &apos;&quot; &#65;&#x42;&#xe9;&#233;&#x1F600;</a>") == "<b> & '\" ABéé😀")
        let attributes = try #require(try starts(#"<a x="&lt;&amp;&quot;&#x41;" y='&apos;"'/>"#).first).attributes
        #expect(attributes.map(\.value) == [#"<&"A"#, #"'""#])
    }

    @Test("an entity only a DTD could define, a bare &, or a reference to a character XML forbids is an error")
    func badReferences() {
        for body in ["&nbsp;", "a & b", "&amp", "&#65", "&#;", "&#x;", "&#X41;", "&#0;", "&#x1;", "&#xD800;", "&#xFFFE;",
                     "&#x110000;", "&#99999999999999999999999999;", "&#x99999999999999999999999;", "&lol;", "&#-1;"] {
            #expect(isMalformed(refusal("<a>\(body)</a>")), "\(body)")
            #expect(isMalformed(refusal("<a x=\"\(body)\"/>")), "\(body) in an attribute")
        }
    }

    @Test("a CDATA section is text as it stands, and only inside the root element")
    func cdata() throws {
        #expect(try text("<a>x<![CDATA[<b>&amp;]]]><![CDATA[]]>y</a>") == "x<b>&amp;]y")
        #expect(try text("<a><![CDATA[one\r\ntwo]]></a>") == "one\ntwo")
        #expect(isMalformed(refusal("<![CDATA[x]]><a/>")))
        #expect(isMalformed(refusal("<a/><![CDATA[x]]>")))
        #expect(isMalformed(refusal("<a><![CDATA[x</a>")))
        #expect(isMalformed(refusal("<a>x]]>y</a>")))
        #expect(try text("<a>x]]y]></a>") == "x]]y]>")
    }

    @Test("comments are skipped wherever they may be; processing instructions are reported")
    func commentsAndInstructions() throws {
        let found = try events("""
            <?xml version="1.0"?><!-- before --><?pi one  two ?><r>a<!-- <inside> & -->b<?q?></r><!--after-->\n<?end?>
            """)
        let r = XMLName("", "r")
        #expect(found == [.processingInstruction(target: "pi", data: "one  two "), .start(r, attributes: []), .text("ab"),
                          .processingInstruction(target: "q", data: ""), .end(r), .processingInstruction(target: "end", data: "")])
        #expect(try events("<?xml-stylesheet href='a.xsl'?><r/>").first == .processingInstruction(target: "xml-stylesheet", data: "href='a.xsl'"))
        for bad in ["<a><!-- a -- b --></a>", "<a><!-- a ---></a>", "<a><!-- open</a>", "<a><?pi</a>", "<a><?pi:x?></a>",
                    "<a><?xml version=\"1.0\"?></a>", "<a/><?XML x?>", "<a><?1?></a>", "<a><?pi?x?></a>"] {
            #expect(isMalformed(refusal(bad)), "\(bad)")
        }
    }

    @Test("the XML declaration: only at the very start, version first, then encoding and standalone; only UTF-8")
    func declaration() throws {
        for fine in [#"<?xml version="1.0"?><a/>"#, #"<?xml version='1.0' encoding='UTF-8' standalone='yes'?><a/>"#,
                     "<?xml version=\"1.0\" encoding=\"us-ascii\" ?>\n<a/>", "\u{FEFF}<?xml version=\"1.0\" encoding=\"utf-8\"?><a/>",
                     #"<?xml  version = "1.1"  encoding = "utf8"?><a/>"#] {
            #expect(refusal(fine) == nil, "\(fine)")
        }
        #expect(refusal(#"<?xml version="1.0" encoding="ISO-8859-1"?><a/>"#) == .declaredEncoding("ISO-8859-1"))
        #expect(refusal(#"<?xml version="1.0" encoding="UTF-16"?><a/>"#) == .declaredEncoding("UTF-16"))
        for bad in [#" <?xml version="1.0"?><a/>"#, #"<?xml encoding="UTF-8"?><a/>"#, #"<?xml version="2.0"?><a/>"#,
                    #"<?xml version="1.0" standalone="yes" encoding="UTF-8"?><a/>"#, #"<?xml version="1.0"encoding="UTF-8"?><a/>"#,
                    #"<?xml version="1.0" standalone="maybe"?><a/>"#, #"<?xml version="1.0" encoding="-x"?><a/>"#,
                    #"<?xml version="1.0" foo="bar"?><a/>"#, #"<?xml version="1.0"><a/>"#, "<?xml?><a/>"] {
            #expect(isMalformed(refusal(bad)), "\(bad)")
        }
    }

    @Test("whitespace may go wherever XML allows it; line ends read as \\n, and as spaces in attribute values")
    func whitespace() throws {
        let found = try events("\n<a \n x = '1'\t y=\"a\tb\r\nc&#10;\" >a\r\nb\rc</a >\n\n")
        #expect(found == [.start(XMLName("", "a"), attributes: [XMLAttribute(name: XMLName("", "x"), value: "1"),
                                                                 XMLAttribute(name: XMLName("", "y"), value: "a b c\n")]),
                          .text("a\nb\nc"), .end(XMLName("", "a"))])
        for bad in ["< a/>", "<a/ >", "</ a>", "<a></a\n", #"<a x="1"y="2"/>"#, "<a x = 1/>", #"<a x="1/>"#, #"<a x="<"/>"#, "<a x/>"] {
            #expect(isMalformed(refusal(bad)), "\(bad)")
        }
    }

    @Test("namespaces: declared on any element, in scope until its end, the default one too; attributes without a prefix have none")
    func namespaceScopes() throws {
        let found = try starts("""
            <r xmlns="urn:default" xmlns:p="urn:one">
              <p:a xmlns:p="urn:two"><p:b/></p:a>
              <p:c/>
              <d xmlns=""><e/></d>
              <f a="1" p:g="2" xml:lang="de"/>
            </r>
            """)
        #expect(found.map(\.name) == [XMLName("urn:default", "r"), XMLName("urn:two", "a"), XMLName("urn:two", "b"),
                                      XMLName("urn:one", "c"), XMLName("", "d"), XMLName("", "e"), XMLName("urn:default", "f")])
        #expect(found.last?.attributes.map(\.name) == [XMLName("", "a"), XMLName("urn:one", "g"), XMLName(XMLNamespaces.xml, "lang")])
        #expect(found[1].name.qualifiedName == "p:a")
        // A name is its URI and local name; the prefix it was written with does not count.
        #expect(XMLName("DAV:", "href", prefix: "d") == XMLName("DAV:", "href", prefix: "D"))
        #expect(XMLName("DAV:", "href") != XMLName("urn:other", "href"))
    }

    @Test("a prefix must be declared where it is used; xml and xmlns keep their meaning")
    func undeclaredPrefixes() {
        for bad in ["<p:a/>", #"<a p:x="1"/>"#, #"<r><a xmlns:p="urn:p"/><p:b/></r>"#, #"<p:a xmlns:q="urn:p"/>"#,
                    #"<a xmlns:p=""/>"#, #"<xmlns:a/>"#, #"<a:b:c xmlns:a="urn:a"/>"#, #"<a: xmlns:a="urn:a"/>"#, #"<:a/>"#,
                    #"<a:1 xmlns:a="urn:a"/>"#, #"<a xmlns:xml="urn:x"/>"#, #"<a xmlns:xmlns="urn:x"/>"#,
                    #"<a xmlns:p="http://www.w3.org/XML/1998/namespace"/>"#, #"<a xmlns="http://www.w3.org/2000/xmlns/"/>"#,
                    #"<a xmlns:="urn:a"/>"#] {
            #expect(isMalformed(refusal(bad)), "\(bad)")
        }
        #expect(refusal(#"<a xmlns:xml="http://www.w3.org/XML/1998/namespace" xml:space="preserve"/>"#) == nil)
    }

    @Test("an end tag must spell the start tag's name as written, even when another prefix means the same namespace")
    func endTagsMatchAsWritten() {
        #expect(isMalformed(refusal(#"<a:x xmlns:a="urn:u" xmlns:b="urn:u"></b:x>"#)))
        #expect(refusal(#"<a:x xmlns:a="urn:u" xmlns:b="urn:u"></a:x>"#) == nil)
    }

    @Test("an attribute may appear once, by its name as written and by its namespace and local name")
    func duplicateAttributes() {
        #expect(isMalformed(refusal(#"<a x="1" x="2"/>"#)))
        #expect(isMalformed(refusal(#"<a xmlns:p="urn:p" xmlns:p="urn:q"/>"#)))
        #expect(isMalformed(refusal(#"<a xmlns:p="urn:u" xmlns:q="urn:u" p:x="1" q:x="2"/>"#)))
        #expect(refusal(#"<a xmlns:p="urn:u" x="1" p:x="2"/>"#) == nil)
    }

    @Test("a DOCTYPE is refused wherever it is, with or without entities: no billion laughs, no external entity")
    func doctypeRefused() {
        for xml in [#"<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;">]><a>&b;</a>"#,
                    #"<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>"#,
                    "<!DOCTYPE r><r/>", "<!doctype html><r/>", "<r><!DOCTYPE r></r>", "<r/><!DOCTYPE r>"] {
            #expect(refusal(xml) == .doctype, "\(xml)")
        }
        #expect(isMalformed(refusal(#"<!ENTITY a "b"><r/>"#)))
        #expect(isMalformed(refusal(#"<r><!ENTITY a "b"></r>"#)))
        // Inside a comment or CDATA section the words are only text.
        #expect(refusal("<!-- <!DOCTYPE r> --><r><![CDATA[<!DOCTYPE r>]]></r>") == nil)
    }

    @Test("elements nest at most maximumDepth deep, counted without recursion however deep the input goes")
    func depthBound() {
        func nested(_ depth: Int) -> String { String(repeating: "<x>", count: depth) + String(repeating: "</x>", count: depth) }
        #expect(refusal(nested(8), maximumDepth: 8) == nil)
        #expect(refusal(nested(9), maximumDepth: 8) == .tooDeep(limit: 8))
        #expect(refusal(String(repeating: "<x>", count: 8) + "<y/>" + String(repeating: "</x>", count: 8), maximumDepth: 8) == .tooDeep(limit: 8))
        #expect(refusal(nested(256)) == nil)
        #expect(refusal(nested(257)) == .tooDeep(limit: 256))
        #expect(refusal(String(repeating: "<x>", count: 1_000_000)) == .tooDeep(limit: 256))
    }

    @Test("tags must pair up, and one root element holds everything but comments and processing instructions")
    func structure() {
        for bad in ["<a></b>", "<a><b></a></b>", "<a>", "<a><b>", "<a><b/>", "<a/><b/>", "<a></a><a></a>", "<a/>text", "text<a/>",
                    "", "   ", "<!-- only -->", "</a>", "<a/></a>", "<a", "<a x='1'", "<a></a", "<1a/>", "<-a/>", "<a>&</a>", "<a/>&amp;"] {
            #expect(isMalformed(refusal(bad)), "\(bad)")
        }
    }

    @Test("only UTF-8 is read: invalid sequences, NUL bytes, UTF-16 and characters XML forbids are refused before any markup")
    func encoding() throws {
        let invalid: [[UInt8]] = [[0x3C, 0x61, 0x3E, 0xFF, 0x3C, 0x2F, 0x61, 0x3E], [0x3C, 0x61, 0x3E, 0xC0, 0xAF, 0x3C, 0x2F, 0x61, 0x3E],
                                  [0x3C, 0x61, 0x3E, 0xED, 0xA0, 0x80, 0x3C, 0x2F, 0x61, 0x3E], [0x3C, 0x61, 0x3E, 0xE2, 0x82],
                                  [0xFF, 0xFE, 0x3C, 0x00, 0x61, 0x00, 0x2F, 0x00, 0x3E, 0x00], [0x3C, 0x00, 0x61, 0x00, 0x2F, 0x00, 0x3E, 0x00],
                                  [0x3C, 0x61, 0x2F, 0x3E, 0x00]]
        for bytes in invalid {
            guard case .notUTF8 = refusal(bytes) else { Issue.record("\(bytes) was not refused as not UTF-8"); continue }
        }
        // Even inside a comment, and even after a DOCTYPE (whose refusal would come later).
        #expect(refusal(Array("<!DOCTYPE a><a><!-- ".utf8) + [0xFF] + Array(" --></a>".utf8)) == .notUTF8("line 1 holds bytes that are not UTF-8"))
        for bad in ["<a>\u{1}</a>", "<a>\u{1B}[2J</a>", "<a>\u{FFFE}</a>", "<a x='\u{7}'/>"] {
            #expect(isMalformed(refusal(bad)), "\(bad)")
        }
        let found = try events("<ü:straße xmlns:ü=\"urn:ü\" ü:ä=\"ö\">日本語 😀 \u{85}\u{2028}</ü:straße>")
        #expect(found == [.start(XMLName("urn:ü", "straße"), attributes: [XMLAttribute(name: XMLName("urn:ü", "ä"), value: "ö")]),
                          .text("日本語 😀 \u{85}\u{2028}"), .end(XMLName("urn:ü", "straße"))])
    }

    @Test("an error says on which line it is, and the reader stays failed")
    func errorLine() throws {
        var reader = try XMLReader(Array("<a>\n<b>\n</a>".utf8))
        #expect(try reader.next() == .start(XMLName("", "a"), attributes: []))
        #expect(try reader.next() == .text("\n"))
        #expect(try reader.next() == .start(XMLName("", "b"), attributes: []))
        #expect(try reader.next() == .text("\n"))
        let error = #expect(throws: XMLReaderError.self) { try reader.next() }
        #expect(error?.line == 3)
        #expect(error?.description == "line 3: <b> is closed by </a>")
        #expect(throws: XMLReaderError.self) { try reader.next() }
    }

    @Test("fifty thousand prefixes on the root and as many elements using them: each name resolves to its own binding")
    func manyPrefixes() throws {
        let count = 50_000
        var xml = "<r"
        for i in 0..<count { xml += " xmlns:p\(i)=\"urn:\(i)\"" }
        xml += ">"
        for i in 0..<count { xml += "<p\(i):x p\(count - 1 - i):y=\"\"/>" }
        xml += "</r>"
        let found = try events(xml)
        #expect(found.count == 2 * count + 2)
        #expect(found[2 * 4000 + 1] == .start(XMLName("urn:4000", "x"), attributes: [XMLAttribute(name: XMLName("urn:\(count - 4001)", "y"), value: "")]))
        // No clock is asserted: a lookup is one dictionary read (XMLNamespaces), which reads
        // this in well under a second even unoptimised; scanning every binding for each name
        // would take minutes and show as this test's time.
    }

    // MARK: Fed in pieces

    @Test("a document fed in pieces reads as it comes: each event once more than the lookahead is there after it, the rest at the end")
    func fedAsItComes() throws {
        let xml = Array("<r>\(String(repeating: "<x>é</x>", count: 20))</r>".utf8)
        var reader = XMLReader(lookahead: 40)
        xml[..<50].withUnsafeBytes { reader.feed($0) }
        var early: [XMLEvent] = []
        while let event = try reader.next() { early.append(event) }
        let x = XMLName("", "x")
        #expect(early == [.start(XMLName("", "r"), attributes: []), .start(x, attributes: []), .text("é"), .end(x)])
        #expect(50 - reader.offset <= 40)
        xml[50...].withUnsafeBytes { reader.feed($0) }
        reader.finish()
        var all = early
        while let event = try reader.next() { all.append(event) }
        #expect(all == (try events(xml)))
        #expect(try reader.next() == nil)
    }

    @Test("fed, a character split between pieces and a byte-order mark in pieces read as whole; a cut character at the end is refused")
    func fedCharacters() throws {
        let xml = [0xEF, 0xBB, 0xBF] + Array("<a>😀日本</a>".utf8)
        for piece in 1...4 { #expect(try fed(xml, piece: piece, lookahead: 16) == (try events(xml))) }
        #expect(throws: XMLReaderError.self) { try fed([0xFE, 0xFF, 0x00, 0x3C], piece: 1, lookahead: 4) }
        let cut = Array("<a>x</a>".utf8) + [0xF0, 0x9F]
        let error = #expect(throws: XMLReaderError.self) { try fed(cut, piece: 1, lookahead: 4) }
        #expect(error?.reason == .notUTF8("line 1 holds bytes that are not UTF-8"))
    }

    @Test("fed, a document cut short is refused at its end, and an event longer than the lookahead is refused, not waited for")
    func fedLimits() {
        #expect(isMalformed(refusalFed("<a><b>text</b>")))
        #expect(isMalformed(refusalFed("<a><b>")))
        #expect(isMalformed(refusalFed("")))
        #expect(isMalformed(refusalFed("<a>\(String(repeating: "long text ", count: 20))</a>", lookahead: 64)))
        #expect(refusalFed("<a>\(String(repeating: "long text ", count: 20))</a>", lookahead: 256) == nil)
    }

    @Test("fed a long document, the reader holds only about its lookahead, and an error still says the document's line")
    func fedLong() throws {
        let entry = "<d:response><d:href>/f/IMG_0001.jpg</d:href></d:response>\n"
        let count = 20_000
        var reader = XMLReader(lookahead: 4096)
        var held = 0, starts = 0
        func feed(_ text: String) throws {
            Array(text.utf8).withUnsafeBytes { reader.feed($0) }
            held = max(held, reader.held)
            while let event = try reader.next() { if case .start = event { starts += 1 } }
        }
        try feed("<d:multistatus xmlns:d=\"DAV:\">\n")
        for _ in 0..<count { try feed(entry) }
        try feed("<d:oops></d:response>")
        reader.finish()
        let error = #expect(throws: XMLReaderError.self) {
            while let event = try reader.next() { if case .start = event { starts += 1 } }
        }
        #expect(error?.line == count + 2)
        #expect(error?.description == "line \(count + 2): <d:oops> is closed by </d:response>")
        #expect(starts == 1 + 2 * count + 1) // the multistatus, each response and href, then <d:oops>
        #expect(held < 4096 + (64 << 10) * 2 + 200, "held \(held) bytes of \(count * entry.utf8.count)")
    }
}

private func refusalFed(_ xml: String, lookahead: Int = 4) -> XMLReaderError.Reason? {
    do {
        _ = try fed(Array(xml.utf8), piece: 1, lookahead: lookahead)
        return nil
    } catch {
        return error.reason
    }
}
