import Foundation
import Glibc
import TestSupport
import Testing

/// One test per reason code, driven by the reference server's fault switches: transient
/// reasons put the row in `retrying` with a next attempt and end in a byte-identical copy;
/// permanent ones put it in `failed` with the specific reason and nothing more happens.
@Suite("Each way an upload can stop shows its own reason")
struct FailureReasonTests {
    // MARK: Transient

    @Test("server gone while the network is up: retrying as unreachable, never 'no network', with attempts counting up, and done once it is back")
    func unreachable() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        try await scene.stopServer()
        try await scene.startAgent()
        let s = try await scene.expectRetrying("unreachable", attempts: 2)
        #expect(s.row.rowReasonMessage?.contains("cannot reach the server") == true, "\(s.row.rowReason ?? [:])")
        let status = try await offThePool { try scene.session.cli(["status"]) }
        #expect(status.stdout.contains("1 retrying (cannot reach the server)"), "\(status.stdout)")
        #expect(!status.stdout.contains("network"), "\(status.stdout)")
        try await scene.restartServer()
        try await scene.expectCompletedIdentical()
    }

    @Test("server gone with 60 files queued: the failed ones try it again, the rest wait saying why without trying, and all go once it is back")
    func unreachableBacklog() async throws {
        let scene = try await Self.backlog()
        try await scene.stopServer()
        try await scene.startAgent()
        try await Self.expectWaiting(scene, code: "unreachable", saying: "waiting until it answers")
        try await scene.restartServer()
        try await offThePool { try scene.session.waitForAll("completed", count: 60, timeout: 150) }
    }

    @Test("a server that fails every request (500) with 60 files queued: after three files in a row the rest wait saying so, and all go once it works")
    func failingServerBacklog() async throws {
        let scene = try await Self.backlog()
        try await scene.fault(["method": "PATCH", "status": 500, "body": "database on fire", "count": 100_000])
        try await scene.startAgent()
        try await Self.expectWaiting(scene, code: "server_error", saying: "every request fails")
        try await scene.clearFaults()
        try await offThePool { try scene.session.waitForAll("completed", count: 60, timeout: 150) }
    }

    /// One file queued by the scene, 59 more beside it.
    static func backlog() async throws -> UploadScene {
        let scene = try await UploadScene.make(size: 1000)
        try await offThePool {
            for n in 1...59 { _ = try scene.session.home.randomFile("pictures/more/IMG_\(n).jpg", size: 1000, seed: UInt64(n)) }
            let r = try scene.session.cli(["upload", "--to", "/In", scene.session.home.path + "/pictures/more"])
            guard r.status == 0 else { throw TestFailure("upload failed (\(r.status)): \(r.stderr)") }
        }
        return scene
    }

    /// The files that did not try the server wait for it, saying why with `code`, and stay
    /// so: each try backs off (1, 2, 4 s...), and one more file joins the failed ones each
    /// time their wait ends. (Before, every file tried the server in turn, again and again.)
    static func expectWaiting(_ scene: UploadScene, code: String, saying words: String) async throws {
        func waiting(_ items: [[String: Any]]) -> [[String: Any]] {
            items.filter { $0["state"] as? String == "queued" && ($0["reason"] as? [String: Any])?["code"] as? String == code }
        }
        try await offThePool {
            try scene.session.waitFor("the files that did not try the server waiting for it") { waiting($0).count >= 50 }
            usleep(6_000_000)
        }
        let items = try await offThePool { try scene.session.items() }
        let tried = items.filter { ($0["attempts"] as? Int ?? 0) > 0 }
        #expect(tried.count <= 12, "\(tried.count) files tried the server")
        #expect(waiting(items).count >= 45, "\(waiting(items).count) files wait saying \(code)")
        let message = (waiting(items).first?["reason"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains(words), "\(message)")
    }

    @Test("a PATCH that stalls longer than stall_seconds: retrying as timeout, then done")
    func timeout() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        // stall_seconds is 2. The stalls go on until the test has seen the row waiting (a loaded
        // machine may look late); then they end and the upload goes through.
        // row waiting, even on a loaded machine.
        try await scene.fault(["method": "PATCH", "stall_seconds": 20, "after_bytes": 50_000, "count": 1000])
        try await scene.startAgent()
        try await scene.expectRetrying("timeout")
        try await scene.clearFaults()
        try await scene.expectCompletedIdentical()
    }

    @Test("a connection reset mid-PATCH: retrying as connection_reset, attempts count up, then done")
    func connectionReset() async throws {
        let scene = try await UploadScene.make(size: 600_000)
        // Reset before a byte is kept, until the test has seen the attempts count up.
        try await scene.fault(["method": "PATCH", "reset_after_bytes": 0, "count": 1000])
        try await scene.startAgent()
        let s = try await scene.expectRetrying("connection_reset", attempts: 2, timeout: 60)
        #expect(s.row.rowReasonAction?.contains("retried by itself") == true)
        try await scene.clearFaults()
        try await scene.expectCompletedIdentical()
    }

    @Test("500 from the server: retrying as server_error with attempts counting up while nothing moves")
    func serverError() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        try await scene.fault(["method": "PATCH", "status": 500, "body": "database on fire", "count": 100])
        try await scene.startAgent()
        try await scene.expectRetrying("server_error", attempts: 1)
        let later = try await scene.expectRetrying("server_error", attempts: 3)
        #expect(later.row.rowReasonMessage?.contains("500") == true, "\(later.row.rowReason ?? [:])")
        #expect(later.row.rowReasonMessage?.contains("database on fire") == true, "the server's words: \(later.row.rowReason ?? [:])")
        try await scene.clearFaults()
        try await scene.expectCompletedIdentical()
    }

    @Test("429 with Retry-After: 2: retrying as server_busy, next attempt 2 s later")
    func serverBusy() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        // Busy until the test has seen it: a loaded machine may look late, the row must still say so.
        try await scene.fault(["method": "PATCH", "status": 429, "headers": ["Retry-After": "2"], "body": "slow down", "count": 1000])
        try await scene.startAgent()
        try await scene.expectRetrying("server_busy", retryAfter: 2)
        try await scene.clearFaults()
        try await scene.expectCompletedIdentical()
    }

    @Test("503 with Retry-After: 3: retrying as maintenance with the server's words, next attempt 3 s later")
    func maintenance() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        try await scene.fault(["method": "*", "path_prefix": "/files/", "status": 503, "headers": ["Retry-After": "3"],
                               "body": "down for maintenance until noon", "count": 1000])
        try await scene.startAgent()
        let s = try await scene.expectRetrying("maintenance", retryAfter: 3)
        #expect(s.row.rowReasonMessage?.contains("down for maintenance until noon") == true, "\(s.row.rowReason ?? [:])")
        try await scene.clearFaults()
        try await scene.expectCompletedIdentical()
    }

    @Test("460 on a PATCH: retrying as checksum_mismatch, the chunk is sent again and the file completes")
    func checksumMismatch() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        try await scene.fault(["method": "PATCH", "status": 460, "body": "checksum mismatch", "count": 1000])
        try await scene.startAgent()
        try await scene.expectRetrying("checksum_mismatch")
        try await scene.clearFaults()
        try await scene.expectCompletedIdentical()
        #expect(try await scene.requests("PATCH") >= 2, "a refused chunk, sent again, and the one that went through")
    }

    // MARK: Permanent

    @Test("401 from the server: failed as auth, and not retried by itself")
    func auth() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        try await scene.fault(["method": "*", "path_prefix": "/files/", "status": 401,
                               "headers": ["WWW-Authenticate": "Basic realm=\"instant-upload\""], "body": "authentication required"])
        try await scene.startAgent()
        let row = try await scene.expectFailedForGood("auth")
        #expect(row.rowReasonAction?.contains("account add") == true, "what to do: \(row.rowReason ?? [:])")
    }

    @Test("403 \"virus found\": failed as rejected_by_server with the server's words")
    func rejectedByServer() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        try await scene.fault(["method": "PATCH", "status": 403, "body": "virus found: Eicar-Test-Signature"])
        try await scene.startAgent()
        let row = try await scene.expectFailedForGood("rejected_by_server")
        #expect(row.rowReasonMessage?.contains("virus found: Eicar-Test-Signature") == true, "\(row.rowReason ?? [:])")
    }

    @Test("a folder the server refuses to create (MKCOL 403): failed as target_missing, naming the folder")
    func targetMissing() async throws {
        let scene = try await UploadScene.make(size: 300_000, folder: "Nowhere", makeFolder: false)
        try await scene.fault(["method": "MKCOL", "status": 403, "body": "no permission", "count": 100])
        try await scene.startAgent()
        let row = try await scene.expectFailedForGood("target_missing")
        #expect(row.rowReasonMessage?.contains("/Nowhere") == true && row.rowReasonMessage?.contains("403") == true,
                "\(row.rowReason ?? [:])")
        #expect(row.rowReasonAction?.contains("--to") == true, "choose a new folder: \(row.rowReason ?? [:])")
        #expect(try await scene.requests("POST") == 0, "no upload is created for a folder that cannot exist")
    }

    @Test("a file where the folder should be: failed as target_missing, saying what is in the way")
    func fileInTheWay() async throws {
        let scene = try await UploadScene.make(size: 300_000, folder: "Taken/Below", makeFolder: false)
        _ = FileManager.default.createFile(atPath: scene.server.tree() + "/Taken", contents: Data("a file".utf8))
        try await scene.startAgent()
        let row = try await scene.expectFailedForGood("target_missing")
        #expect(row.rowReasonMessage?.contains("/Taken is a file on the server") == true, "\(row.rowReason ?? [:])")
    }

    @Test("a file over the server's Tus-Max-Size: failed as too_large")
    func tooLarge() async throws {
        let scene = try await UploadScene.make(size: 300_000, serverArguments: ["--max-size", "100000"])
        try await scene.startAgent()
        let row = try await scene.expectFailedForGood("too_large")
        #expect(row.rowReasonMessage?.contains("100000") == true, "the limit is named: \(row.rowReason ?? [:])")
        #expect(try await scene.requests("POST") == 0, "no upload is created for a file the server said it won't take")
    }

    @Test("quota below the file's size: failed as quota (507)")
    func quota() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        try await scene.setQuota(100_000)
        try await scene.startAgent()
        let row = try await scene.expectFailedForGood("quota")
        #expect(row.rowReasonMessage?.contains("507") == true, "\(row.rowReason ?? [:])")
    }

    @Test("412 on the creation POST: failed as protocol")
    func protocolError() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        try await scene.fault(["method": "POST", "path_prefix": "/files/", "status": 412, "body": "unsupported version"])
        try await scene.startAgent()
        let row = try await scene.expectFailedForGood("protocol")
        #expect(row.rowReasonMessage?.contains("412") == true, "\(row.rowReason ?? [:])")
    }

    @Test("the file deleted after queueing, before the agent runs: failed as source_missing, nothing sent")
    func sourceMissingBeforeStart() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        try FileManager.default.removeItem(atPath: scene.file)
        let requestsBefore = try await scene.requestTotal()
        try await scene.startAgent()
        let row = try await scene.expectFailedForGood("source_missing")
        #expect(row.rowReasonAction?.contains("cancel") == true, "discard only: \(row.rowReason ?? [:])")
        #expect(try await scene.requestTotal() == requestsBefore, "nothing reached the server for a file that is gone")
    }

    @Test("the file deleted mid-upload: failed as source_missing, not retried")
    func sourceMissingMidUpload() async throws {
        let scene = try await UploadScene.make(size: 3 * oneMiB, stallSeconds: 300)
        // The first chunk stalls on the server after 100 kB, until the file is gone: the upload
        // is surely under way when it goes, however loaded the machine is (and the agent, which
        // waits 300 s for a stalled transfer, never gives up on it first).
        try await scene.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 100_000])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        try FileManager.default.removeItem(atPath: scene.file)
        try await scene.clearFaults()
        try await scene.expectFailedForGood("source_missing")
        #expect(!FileManager.default.fileExists(atPath: scene.serverCopy), "no partial file in the person's tree")
    }

    @Test("the file rewritten between chunks: started again (source_changed) and the server holds the new bytes, never a mix")
    func sourceChanged() async throws {
        let scene = try await UploadScene.make(size: 3 * oneMiB, stallSeconds: 300)
        let oldSHA = try await scene.sha256(scene.file)
        try await scene.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 100_000])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        try scene.rewriteInPlace(seed: 99)
        try await scene.clearFaults()
        let newSHA = try await scene.sha256(scene.file)
        #expect(newSHA != oldSHA)

        var sawReason = false
        try await scene.watch("completed after the change", timeout: 60) { row in
            if row.rowReasonCode == "source_changed" { sawReason = true }
            return row.rowState == "completed"
        }
        let log = scene.agentLog
        #expect(sawReason || log.contains("changed while uploading"),
                "the restart is visible as source_changed in the row or the agent log:\n\(log.suffix(2000))")
        try await scene.expectCompletedIdentical()
        #expect(try await scene.sha256(scene.serverCopy) == newSHA, "the server has the new content")
        let row = try await scene.requireRow()
        #expect(row["sha256"] as? String == newSHA, "the queue records the digest of what was sent")
        #expect(row.rowCounters["resumed_at"] as? Int == 0, "the last run started again from byte zero: \(row.rowCounters)")
        #expect(try await scene.requests("DELETE") >= 1, "the upload of the old content was ended on the server")
        #expect(scene.serverUploads().count <= 1, "no stale partial upload left: \(scene.serverUploads())")
    }

    @Test("the file rewritten while its last chunk is on the wire: the server ends with the new bytes, never a mix")
    func sourceChangedDuringLastChunk() async throws {
        // One 16 MiB chunk, stalled on the server after 100 kB: far more than the socket
        // buffers hold is still to be read from the file when the file changes.
        let scene = try await UploadScene.make(size: 16 * oneMiB, stallSeconds: 300)
        try scene.session.writeConfig("[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 16\nstall_seconds = 300\n")
        let oldSHA = try await scene.sha256(scene.file)
        let fresh = TestData.bytes(count: scene.size, seed: 99)
        try await scene.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 100_000])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        try scene.rewriteInPlace(with: fresh)
        try await scene.clearFaults()
        let newSHA = try await scene.sha256(scene.file)
        try await scene.watch("completed after the change", timeout: 60) { $0.rowState == "completed" }
        let copy = try await scene.sha256(scene.serverCopy)
        #expect(copy == newSHA, copy == oldSHA ? "the server kept the old version although the file changed before the upload finished"
                                               : "the server's copy is a mix of the old and the new file; agent log:\n\(scene.agentLog.suffix(1500))")
        let row = try await scene.requireRow()
        #expect(row["sha256"] as? String == newSHA, "the queue's digest is the file's: \(row["sha256"] ?? "nil")")
    }
}
