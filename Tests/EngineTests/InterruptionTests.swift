import Foundation
import Glibc
import TestSupport
import Testing

/// An upload broken off mid-chunk, by the link, the agent's death or the server's, resumes
/// from the server's offset and ends byte-identical, without reading the file again from the
/// start. And `cancel` of a running upload ends it on the server too.
@Suite("Interrupted uploads resume to the byte")
struct InterruptionTests {
    // A 5 MiB file in 1 MiB chunks. A zero-second stall on the first PATCHes lets them
    // through, so the fault after it lands on a later chunk, mid-chunk.
    static let size = 5 * oneMiB

    static func passThrough(_ chunks: Int) -> [String: Any] {
        ["method": "PATCH", "stall_seconds": 0, "after_bytes": 0, "count": chunks]
    }

    @Test("a connection reset in the middle of the second chunk: resumed from the server's offset, identical copy")
    func resetMidChunk() async throws {
        let scene = try await UploadScene.make(size: Self.size, stallSeconds: 10)
        try await scene.faults([Self.passThrough(1), ["method": "PATCH", "reset_after_bytes": 300_000]])
        try await scene.startAgent()
        try await scene.expectCompletedIdentical()
        try await scene.expectResumeCounters()
        // The server kept the 300,000 bytes that arrived before the reset (HEAD says so).
        let counters = try await scene.requireRow().rowCounters
        #expect(counters["resumed_at"] as? Int == oneMiB + 300_000, "the last run started from the server's offset: \(counters)")
    }

    @Test("the agent SIGKILLed mid-chunk and started again: resumed from the last checkpoint, identical copy")
    func agentKilledMidChunk() async throws {
        // The stall outlasts anything the test may take to look (a loaded machine can keep it
        // waiting for many seconds), and the agent never gives up on it first.
        let scene = try await UploadScene.make(size: Self.size, stallSeconds: 300)
        try await scene.faults([Self.passThrough(2), ["method": "PATCH", "stall_seconds": 120, "after_bytes": 200_000]])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        try await scene.watch("two chunks confirmed", timeout: 15) { ($0["checkpoint_offset"] as? Int ?? 0) >= 2 * oneMiB }
        try await scene.killAgent()
        #expect(try await scene.requireRow().rowState == "in_progress", "a killed agent leaves the row as it was")
        try await scene.clearFaults()
        try await scene.startAgent()
        try await scene.expectCompletedIdentical()
        try await scene.expectResumeCounters()
        #expect(scene.agentLog.contains("took back 1"), "the new agent says it took the row back:\n\(scene.agentLog.suffix(1500))")
    }

    @Test("the server SIGKILLed mid-chunk and started again: resumed, identical copy")
    func serverKilledMidChunk() async throws {
        // As above: the stall lasts until the server is killed, however late the test looks.
        let scene = try await UploadScene.make(size: Self.size, stallSeconds: 300)
        try await scene.faults([Self.passThrough(1), ["method": "PATCH", "stall_seconds": 120, "after_bytes": 300_000]])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        try await scene.watch("one chunk confirmed", timeout: 15) { ($0["checkpoint_offset"] as? Int ?? 0) >= oneMiB }
        try await scene.killServer()
        try await scene.watch("the agent notices", timeout: 30) { $0.rowState == "retrying" }
        try await scene.restartServer()
        try await scene.expectCompletedIdentical()
        try await scene.expectResumeCounters()
    }

    @Test("cancel of a running upload removes the row and ends the upload on the server")
    func cancelInFlight() async throws {
        let scene = try await UploadScene.make(size: 3 * oneMiB, stallSeconds: 300)
        try await scene.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 100_000])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        #expect(try await scene.requireRow().rowState == "in_progress")
        // `show --json` only gives the upload's host; the server's tus folder names the upload.
        let uploads = scene.serverUploads()
        try #require(uploads.count == 1, "one upload under way on the server: \(uploads)")
        let uid = uploads[0]
        #expect(try await scene.headStatus(ofUpload: uid) == 200)

        let r = try await scene.cli(["cancel", String(scene.id)])
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        try await scene.waitUntilGone()
        #expect(try await scene.headStatus(ofUpload: uid) == 404, "HEAD on the old upload URL says it is gone")
        #expect(scene.serverUploads().isEmpty, "the server keeps no partial upload: \(scene.serverUploads())")
        #expect(!FileManager.default.fileExists(atPath: scene.serverCopy), "nothing landed in the person's tree")
        #expect(try await scene.requests("DELETE") >= 1, "the agent ended the upload with DELETE")
        #expect(scene.agentLog.contains("cancelled \(scene.name)"), "\(scene.agentLog.suffix(1500))")
    }
}
