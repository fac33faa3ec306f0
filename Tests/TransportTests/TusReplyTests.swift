import Testing
@testable import Transport

@Suite("tus reply headers are read strictly")
struct TusReplyTests {
    func reply(_ headers: [(String, String)]) -> HTTPResponse {
        HTTPResponse(status: 204, headers: headers.map { ($0.0.lowercased(), $0.1) }, body: [])
    }

    @Test("HEAD: the offset and length are plain numbers, the offset within the length")
    func uploadStatus() throws {
        let ok = try TusReply.uploadStatus(reply([("Upload-Offset", "100"), ("Upload-Length", "1000"),
                                                  ("Upload-Expires", "Sun, 06 Nov 1994 08:49:37 GMT")]))
        #expect(ok == TusUploadStatus(offset: 100, length: 1000, expiresAt: 784_111_777_000))
        #expect(try TusReply.uploadStatus(reply([("Upload-Offset", "5")])).length == nil)
        for headers in [[("Upload-Offset", "1001"), ("Upload-Length", "1000")], [("Upload-Offset", "-5")], [("Upload-Offset", "abc")],
                        [("Upload-Offset", "99999999999999999999")], [("Upload-Offset", "1e3")], [("Upload-Offset", "")], [],
                        [("Upload-Offset", "5"), ("Upload-Length", "-1")], [("Upload-Offset", "5"), ("Upload-Length", "inf")],
                        [("Upload-Offset", "5"), ("Upload-Expires", "tomorrow")], [("Upload-Offset", "5"), ("Upload-Expires", "1e300")]] {
            #expect(throws: ProtocolViolation.self, "\(headers)") { try TusReply.uploadStatus(reply(headers)) }
        }
    }

    @Test("PATCH: the confirmed offset lies between where the chunk started and where it ended")
    func patchOffset() throws {
        #expect(try TusReply.patchOffset(reply([("Upload-Offset", "150")]), sentFrom: 100, length: 50).offset == 150)
        #expect(try TusReply.patchOffset(reply([("Upload-Offset", "120")]), sentFrom: 100, length: 50).offset == 120)
        for value in ["99", "151", "-1", "9223372036854775808", "1.5e2", "", " "] {
            #expect(throws: ProtocolViolation.self, "\(value)") {
                try TusReply.patchOffset(reply([("Upload-Offset", value)]), sentFrom: 100, length: 50)
            }
        }
        // A chunk near the end of Int64 cannot make the bound overflow.
        #expect(try TusReply.patchOffset(reply([("Upload-Offset", String(Int64.max))]), sentFrom: Int64.max - 1, length: 10).offset == Int64.max)
    }

    @Test("OPTIONS: a Tus-Max-Size that is not a plain number is a violation, never 'no limit'")
    func serverInfo() throws {
        let info = try TusReply.serverInfo(reply([("Tus-Version", "1.0.0"), ("Tus-Extension", "creation,termination"), ("Tus-Max-Size", "1073741824")]))
        #expect(info.maxSize == 1_073_741_824 && info.supportsCreation)
        #expect(try TusReply.serverInfo(reply([("Tus-Version", "1.0.0")])).maxSize == nil)
        for value in ["-1", "1e9", "inf", "99999999999999999999", "1 GB"] {
            #expect(throws: ProtocolViolation.self, "\(value)") { try TusReply.serverInfo(reply([("Tus-Version", "1.0.0"), ("Tus-Max-Size", value)])) }
        }
    }

    @Test("a Location on another host, with credentials in it, or not a URL at all is refused")
    func location() throws {
        let client = TusClient(endpoint: "http://127.0.0.1:8080/files/", credentials: nil)
        for location in ["http://127.0.0.2:8080/files/x", "http://127.0.0.1:8081/files/x", "https://127.0.0.1:8080/files/x",
                         "http://127.0.0.1:8080@127.0.0.2:8080/files/x", "http://user:pw@127.0.0.1:8080/files/x", "//evil.example/x",
                         "http://[::1", "http://", "http://127.0.0.1:8080/files/x\r\nX-Evil: 1", "/files/ x", "file:///etc/passwd",
                         "http://127.0.0.1:8080?@", "http://127.0.0.1:8080?@127.0.0.2/x", "http://127.0.0.1:8080#@x",
                         String(repeating: "a", count: 5000)] {
            #expect(throws: ProtocolViolation.self, "\(location)") { try client.resolve(location) }
        }
        #expect(try client.resolve("/files/abc") == "http://127.0.0.1:8080/files/abc")
        #expect(try client.resolve("abc") == "http://127.0.0.1:8080/files/abc")
    }
}
