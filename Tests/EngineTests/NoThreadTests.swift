import Foundation
import TestSupport
import Testing

/// When the system has no thread to give (`INSTANT_UPLOAD_TEST_NO_THREAD` refuses them by
/// name, as pthread_create's EAGAIN would), nothing waits forever for work that never began.
@Suite("No thread to spare")
struct NoThreadTests {
    @Test("no thread for a transfer: retrying as no_resources with attempts counting up, not held as in progress; done once threads are back")
    func noThreadForTheTransfer() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        scene.session.environment["INSTANT_UPLOAD_TEST_NO_THREAD"] = "transfer-"
        try await scene.startAgent()
        let s = try await scene.expectRetrying("no_resources", attempts: 2)
        #expect(s.row.rowReasonMessage?.contains("no memory or threads to spare") == true, "\(s.row.rowReason ?? [:])")
        try await scene.killAgent()
        scene.session.environment.removeValue(forKey: "INSTANT_UPLOAD_TEST_NO_THREAD")
        try await scene.startAgent()
        try await scene.expectCompletedIdentical()
    }

    @Test("no thread for hashing: a 3 MB upload hashes on its own thread, and the server's copy and the recorded SHA-256 are the file's")
    func noThreadForHashing() async throws {
        let scene = try await UploadScene.make(size: 3_000_000)
        scene.session.environment["INSTANT_UPLOAD_TEST_NO_THREAD"] = "sha256"
        try await scene.startAgent()
        try await scene.expectCompletedIdentical()
        let row = try await scene.requireRow()
        #expect(row["sha256"] as? String == (try await scene.sha256(scene.file)), "the queue's digest is the file's: \(row["sha256"] ?? "nil")")
        #expect(scene.agentLog.contains("sha256: pthread_create"), "the refusal is logged: \(scene.agentLog.suffix(1500))")
    }
}
