import Foundation
import TestSupport
import Testing

/// A server that answers what no sane server sends, against the real agent: every item
/// gets a verdict with a reason (failed as `protocol` quoting the server, or retrying after
/// a sane, capped wait), the agent process stays up, nothing loops, and no password goes
/// to another host.
@Suite("A hostile server gets a verdict, never a crash, a loop or a password")
struct HostileServerTests {
    // MARK: Retry-After

    @Test("an absurd Retry-After (inf, 1e300, -1) fails the item as protocol, quoting the server", arguments: [
        ("inf", 503), ("1e300", 503), ("-1", 429),
    ])
    func absurdRetryAfter(value: String, status: Int) async throws {
        let scene = try await HostileScene.upload()
        try await scene.misbehave("retry-after", value, status: status)
        try await scene.startAgent()
        let row = try await scene.expectProtocolFailure(quoting: "`\(value)`")
        #expect(row.rowReasonMessage?.contains("Retry-After") == true, "\(row.rowReason ?? [:])")
    }

    @Test("a Retry-After beyond an hour (a huge number, a far date) waits one hour and shows what the server asked", arguments: [
        "99999999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT",
    ])
    func cappedRetryAfter(value: String) async throws {
        let scene = try await HostileScene.upload()
        try await scene.expectCappedRetryAfter(value)
        try await scene.expectQuietAndAlive()
    }

    @Test("a server whose file, once made, has another size than was sent fails the item as integrity")
    func storedSizeDiffers() async throws {
        let scene = try await HostileScene.upload()
        try await scene.misbehave("stored-size", "299999")
        try await scene.startAgent()
        let row = try await scene.verdict("failed", "integrity")
        #expect(row.rowReasonMessage?.contains("299999 bytes, the file 300000") == true, "\(row.rowReason ?? [:])")
    }

    // MARK: tus numbers

    @Test("an Upload-Offset in a PATCH reply beyond the chunk, negative, not a number or overflowing fails as protocol", arguments: [
        "999999999", "-5", "abc", "99999999999999999999", "1e3",
    ])
    func patchOffset(value: String) async throws {
        let scene = try await HostileScene.upload()
        try await scene.misbehave("patch-offset", value)
        try await scene.startAgent()
        try await scene.expectProtocolFailure(quoting: "`\(value)`")
    }

    @Test("a HEAD that claims more bytes than the upload has fails as protocol instead of skipping ahead")
    func headOffsetBeyondLength() async throws {
        let scene = try await HostileScene.upload()
        try await scene.misbehave("head-offset", "5000000")
        try await scene.startAgent()
        try await scene.expectProtocolFailure(quoting: "`5000000`")
        #expect(try await scene.requests().contains { $0.hasPrefix("HEAD ") }, "the resume asked with HEAD")
    }

    @Test("a HEAD that claims fewer bytes than the server confirmed is believed once, with a note; the PATCH reply that contradicts it fails as protocol")
    func headOffsetBehindConfirmed() async throws {
        // The first chunk (all but the held-back last byte) is confirmed; the last one is
        // cut off; the HEAD that follows claims nothing arrived (as a server restored from a
        // backup would), but the server kept every byte and appends the file sent again.
        let scene = try await HostileScene.upload()
        try await scene.misbehave("head-behind", "0")
        try await scene.startAgent()
        try await scene.expectProtocolFailure(quoting: "`599999`")
        #expect(scene.agentLog.contains("the server holds 0 bytes of the upload, fewer than the 299999 it had confirmed"),
                "\(scene.agentLog.suffix(1500))")
    }

    @Test("a Tus-Max-Size or Upload-Expires no server sends fails as protocol", arguments: [
        ("max-size", "-1"), ("max-size", "inf"), ("expires", "1e300"),
    ])
    func otherTusHeaders(name: String, value: String) async throws {
        let scene = try await HostileScene.upload()
        try await scene.misbehave(name, value)
        try await scene.startAgent()
        try await scene.expectProtocolFailure(quoting: "`\(value)`")
    }

    // MARK: Location

    @Test("a Location on another host or a malformed one fails as protocol, and the other host never hears from the agent", arguments: [
        "{decoy}/files/stolen", "http://127.0.0.1:{port}@{decoyhost}/files/stolen", "//{decoyhost}/files/stolen", "http://[::1",
    ])
    func location(template: String) async throws {
        let scene = try await HostileScene.upload()
        let decoy = scene.server.decoyURL
        let value = template.replacingOccurrences(of: "{decoyhost}", with: String(decoy.dropFirst("http://".count)))
        try await scene.misbehave("location", value)
        try await scene.startAgent()
        var verdict: Error?
        do { _ = try await scene.verdict("failed", "protocol") } catch { verdict = error }
        // Whatever the verdict, the other host must not have heard from the agent.
        let heard = try await scene.decoy()
        #expect(heard.allSatisfy { $0.authorization == nil }, "a password went to the other host: \(heard)")
        #expect(heard.isEmpty, "the agent contacted the other host: \(heard.map(\.request))")
        if let verdict { throw verdict }
        try await scene.expectQuietAndAlive()
    }

    // MARK: WebDAV

    @Test("a billion-laughs or a deeply nested PROPFIND reply fails the download as protocol", arguments: ["billion-laughs", "deep"])
    func hostilePropfind(kind: String) async throws {
        let scene = try await HostileScene.download()
        try await scene.misbehave("propfind", kind)
        try await scene.startAgent()
        try await scene.expectProtocolFailure(quoting: kind == "deep" ? "deep" : "DTD")
    }

    @Test("an overflowing or impossible Content-Range on a resumed download fails as protocol, quoting it", arguments: [
        "bytes 50000-99999999999999999999/*", "bytes 50000-9223372036854775807/*", "bytes -50000-99999/100000",
    ])
    func contentRange(value: String) async throws {
        let scene = try await HostileScene.download()
        try await scene.misbehave("content-range", value)
        try await scene.startAgent()
        try await scene.expectProtocolFailure(quoting: value)
        #expect(try await scene.requests().filter { $0 == "GET /dav/alice/data.bin" }.count == 2,
                "one cut-off download, then one resume that got the bad range")
    }

    @Test("a resume answered 206 with part of the rest and the whole size left unsaid (`bytes N-M/*`): the rest is fetched too, and the file placed is whole")
    func unknownTotalOnResume() async throws {
        let scene = try await HostileScene.download()
        try await scene.misbehave("unknown-total", "")
        try await scene.startAgent()
        let row = try await scene.verdict("completed", nil, timeout: 60)
        let placed = try FileManager.default.contentsOfDirectory(atPath: scene.session.downloads).filter { !$0.hasSuffix(".part") }
        #expect(placed == ["data.bin"], "\(placed)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: scene.session.downloads + "/data.bin"))
        #expect(bytes.count == 100_000, "the file placed has all of the listed size, not the first quarters: \(bytes.count) bytes, \(row)")
        #expect(try await scene.requests().filter { $0 == "GET /dav/alice/data.bin" }.count == 3, "half, then two quarters")
    }

    @Test("a file saved again between the listing and the download: the new version is downloaded, and the listed checksum (the old version's) is no alarm")
    func changedAfterListing() async throws {
        let scene = try await HostileScene.download()
        try await scene.misbehave("changed-after-listing", "\"saved-again\"")
        try await scene.startAgent()
        let row = try await scene.verdict("completed", nil)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: scene.session.downloads + "/data.bin"))
        #expect(bytes.count == 100_000 && bytes.first == 208, "the version served is the file: \(bytes.prefix(4).map { $0 }), \(row)")
    }

    @Test("a server whose GET names the listed version by another ETag than its listing, sending it damaged: the listed checksum still catches it")
    func etagFormsDifferButTheChecksumHolds() async throws {
        let scene = try await HostileScene.download()
        try await scene.misbehave("etag-forms", "\"another-form\"")
        try await scene.startAgent()
        let row = try await scene.verdict("failed", "integrity")
        #expect(row.rowReasonMessage?.contains("do not match the server's checksum") == true, "\(row.rowReason ?? [:])")
    }

    @Test("a resume answered 206 with the rest of another version (Range honoured, If-Range not) fails as protocol, and nothing is stitched")
    func otherVersionOnResume() async throws {
        let scene = try await HostileScene.download()
        try await scene.misbehave("other-version", "\"another-version\"")
        try await scene.startAgent()
        try await scene.expectProtocolFailure(quoting: "another version")
        let placed = try FileManager.default.contentsOfDirectory(atPath: scene.session.downloads).filter { !$0.hasSuffix(".part") }
        #expect(placed.isEmpty, "no file made of two versions: \(placed)")
    }
}
