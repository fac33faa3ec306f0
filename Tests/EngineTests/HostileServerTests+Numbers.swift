import Foundation
import TestSupport
import Testing

/// Hostile numbers beyond tus: the `Content-Length` of a download and the `Retry-After` of a
/// WebDAV GET or PUT get the same verdicts as tus's own headers.
extension HostileServerTests {
    // MARK: Content-Length of a download

    @Test("a download whose Content-Length overflows or is a float fails as protocol quoting it, and no byte stays", arguments: [
        "99999999999999999999", "1e3",
    ])
    func downloadContentLength(value: String) async throws {
        let scene = try await HostileScene.download()
        try await scene.misbehave("content-length", value)
        try await scene.startAgent()
        try await scene.expectProtocolFailure(quoting: "`\(value)`")
        try scene.expectNothingKept()
    }

    @Test("a download whose Content-Length is no number or negative (libcurl refuses the reply) fails as protocol, not as a dropped line", arguments: [
        "abc", "-5",
    ])
    func downloadUnreadableContentLength(value: String) async throws {
        let scene = try await HostileScene.download()
        try await scene.misbehave("content-length", value)
        try await scene.startAgent()
        // libcurl stops at the header and never hands its value over: the reason names the header.
        let row = try await scene.expectProtocolFailure(quoting: "cannot be read")
        #expect("\(row.rowReason ?? [:])".contains("Invalid Content-Length"), "\(row.rowReason ?? [:])")
        try scene.expectNothingKept()
    }

    @Test("a download whose body is longer than its Content-Length fails as protocol instead of keeping the first bytes as the file")
    func downloadLongerThanAnnounced() async throws {
        let scene = try await HostileScene.download()
        try await scene.misbehave("content-length", "50000", extra: ["sent": 100_000])
        try await scene.startAgent()
        let row = try await scene.expectProtocolFailure(quoting: "50000")
        #expect(row.rowReasonMessage?.contains("100000") == true, "the reason says what the listing promised: \(row.rowReason ?? [:])")
        try scene.expectNothingKept()
    }

    @Test("a download whose body ends before its Content-Length is retried as a broken connection, nothing in place")
    func downloadShorterThanAnnounced() async throws {
        let scene = try await HostileScene.download()
        try await scene.misbehave("content-length", "100000", extra: ["sent": 50_000])
        try await scene.startAgent()
        try await scene.verdict("retrying", "connection_reset")
        let names = try scene.downloadedNames()
        #expect(names.allSatisfy { $0.hasSuffix(".part") }, "only the partial file: \(names)")
        #expect(scene.session.agentIsRunning, "the agent process is still up; its log:\n\(scene.agentLog.suffix(2000))")
    }

    // MARK: Retry-After beyond tus

    @Test("an absurd Retry-After (inf, 1e300, -1) on a download GET or a WebDAV PUT fails the item as protocol, quoting the server", arguments: [
        ("inf", 503), ("1e300", 503), ("-1", 429),
    ], ["get", "put"])
    func absurdRetryAfterOnWebDAV(answer: (String, Int), method: String) async throws {
        let (value, status) = answer
        let scene = try await method == "get" ? HostileScene.download() : HostileScene.putUpload()
        try await scene.misbehave("retry-after", value, status: status)
        try await scene.startAgent()
        let row = try await scene.expectProtocolFailure(quoting: "`\(value)`")
        #expect(row.rowReasonMessage?.contains("Retry-After") == true, "\(row.rowReason ?? [:])")
        #expect(try await scene.requests().contains { $0.hasPrefix("\(method.uppercased()) ") }, "the \(method.uppercased()) got the answer")
    }

    @Test("a Retry-After beyond an hour on a download GET or a WebDAV PUT waits one hour, showing what the server asked", arguments: [
        "99999999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT",
    ], ["get", "put"])
    func cappedRetryAfterOnWebDAV(value: String, method: String) async throws {
        let scene = try await method == "get" ? HostileScene.download() : HostileScene.putUpload()
        try await scene.expectCappedRetryAfter(value)
        #expect(try await scene.requests().contains { $0.hasPrefix("\(method.uppercased()) ") }, "the \(method.uppercased()) got the answer")
        try await scene.expectQuietAndAlive()
    }
}
