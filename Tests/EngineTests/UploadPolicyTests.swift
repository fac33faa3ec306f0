import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing

/// The upload policy against a real server: nothing loops, nothing starts again without
/// asking, a crash right after the last chunk costs no byte, and the agent never replaces a
/// file on a server that would let it.
@Suite("Upload policy: ask before restarting, never loop, never overwrite")
struct UploadPolicyTests {
    // MARK: No tight loops

    @Test("an upload the server keeps forgetting starts again a few times quickly, then waits longer and says so")
    func serverKeepsForgetting() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        try await scene.faults([["method": "PATCH", "path_prefix": "/files/", "status": 404, "count": 1000],
                                ["method": "HEAD", "path_prefix": "/files/", "status": 404, "count": 1000]])
        try await scene.startAgent()
        let s = try await scene.watch("a long wait after restarts in a row", timeout: 60) {
            $0.rowState == "retrying" && ($0.rowReasonMessage ?? "").contains("in a row")
        }
        #expect(s.row.rowReasonCode == "upload_lost", "\(s.row.rowReason ?? [:])")
        #expect(s.row.rowReasonMessage?.contains("started again 4 times in a row, so it waits 60 s") == true, "\(s.row.rowReason ?? [:])")
        let next = try #require(s.row.rowNextAttempt)
        // The row became so between two polls; on a loaded machine they can be far apart.
        #expect(next.timeIntervalSince(s.before) > 40, "the fourth restart waits about a minute: next attempt \(next), polled \(s.before)")
        if s.at.timeIntervalSince(s.before) < 5 {
            #expect(next.timeIntervalSince(s.at) > 40, "the fourth restart waits about a minute: next attempt \(next), seen \(s.at)")
        }
        let creations = try await scene.requests("POST")
        #expect(creations <= 5, "each restart waited: \(creations) uploads created; agent log:\n\(scene.agentLog.suffix(2000))")
        try await Task.sleep(for: .seconds(3))
        let after = try await scene.requests("POST")
        if Date() < next { #expect(after == creations, "nothing more while it waits") }
    }

    @Test("a file still being written is not sent again until it has been still for the settle time")
    func waitsUntilStill() async throws {
        let scene = try await UploadScene.make(size: 3 * oneMiB, stallSeconds: 200)
        // The first chunk stalls until the file has begun to change; then the stall is lifted,
        // so the order holds however loaded the machine is.
        try await scene.fault(["method": "PATCH", "stall_seconds": 150, "after_bytes": 100_000])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        // Written to for 14 s, a few bytes in place every 0.3 s, on a thread of its own so
        // that a loaded machine keeps writing: long enough for several attempts.
        let path = scene.file, database = scene.session.databasePath, server = scene.server
        // The count of creations is read on the writer's thread as soon as the writing ends: a
        // check from the cooperative pool can come seconds late on a busy machine, after the
        // file has held still long enough for the upload that rightly follows.
        let (sawWaiting, creationsWhileWriting) = try await offThePool {
            let store = try QueueStore(path: database)
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw TestFailure("cannot open \(path) for writing") }
            defer { close(fd) }
            var saw = false
            for round in 0..<47 {
                var stamp = UInt64(round)
                guard pwrite(fd, &stamp, 8, 0) == 8 else { throw TestFailure("short write to \(path)") }
                if round == 0 { try server.clearFaults() }
                usleep(300_000)
                if let row = try store.transfer(id: Int64(scene.id)), row.reason?.code == .sourceChanged,
                   row.reason?.message.contains("waits until it has been still for \(SettleWindow.seconds) s") == true {
                    saw = true
                }
            }
            let posts = (try server.stats()["requests"] as? [String: Any])?["POST"] as? Int ?? 0
            return (saw, posts)
        }
        #expect(creationsWhileWriting == 1, "no new upload while the file was being written")
        let finalSHA = try await scene.sha256(scene.file)
        try await scene.expectCompletedIdentical(timeout: 60)
        #expect(sawWaiting, "the row said it waits for the file; agent log:\n\(scene.agentLog.suffix(2000))")
        #expect(try await scene.sha256(scene.serverCopy) == finalSHA)
        #expect(try await scene.requests("POST") == 2, "one upload for the first version, one for the last")
        #expect(try await scene.completions() == 1)
    }

    @Test("a file rewritten by a save that paused longer than the settle time, its file still open, is not sent until the program closes it")
    func waitsForItsWriter() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        // Before the agent starts: a program saves over the queued file, writes half, and
        // pauses with the file open; its last write is older than the settle time.
        let newContent = TestData.bytes(count: 400_000, seed: 11)
        let fd = open(scene.file, O_WRONLY | O_TRUNC | O_CLOEXEC)
        try #require(fd >= 0, "cannot open \(scene.file) for writing")
        var open = true
        defer { if open { close(fd) } }
        try #require(newContent[..<200_000].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == 200_000)
        var times = [timespec(tv_sec: time(nil) - 60, tv_nsec: 0), timespec(tv_sec: time(nil) - 60, tv_nsec: 0)]
        try #require(futimens(fd, &times) == 0)

        try await scene.startAgent()
        let waiting = try await scene.watch("the row waiting for the program to close the file") {
            $0.rowState == "retrying" && ($0.rowReasonMessage ?? "").contains("still has it open for writing")
        }
        #expect(waiting.row.rowReasonCode == "source_changed")
        let (posts, puts) = (try await scene.requests("POST"), try await scene.requests("PUT"))
        #expect(posts == 0 && puts == 0, "nothing of the half-written file was sent")

        // The program writes the rest and closes the file: it goes, whole, once.
        try #require(newContent[200_000...].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 200_000) } == 200_000)
        close(fd)
        open = false
        try await scene.expectCompletedIdentical(timeout: 60)
        #expect(FileManager.default.contents(atPath: scene.serverCopy) == Data(newContent))
        #expect(try await scene.requests("POST") == 1, "one upload, of the whole file")
        #expect(try await scene.completions() == 1)
    }

    // MARK: Never restart without asking

    @Test("killed after the server confirmed the last chunk, with a stored expiry in the past: completes without a byte sent again")
    func killedAfterLastChunk() async throws {
        let scene = try await UploadScene.make(size: 3 * oneMiB)
        scene.session.environment["INSTANT_UPLOAD_TEST_PAUSE"] = "upload-confirmed"
        try await scene.startAgent()
        try await scene.waitForLog("paused at upload-confirmed")
        try await scene.killAgent()
        scene.session.environment.removeValue(forKey: "INSTANT_UPLOAD_TEST_PAUSE")
        let store = try QueueStore(path: scene.session.databasePath)
        let row = try #require(try store.transfer(id: Int64(scene.id)))
        #expect(row.state == .inProgress && row.checkpoint.offset < Int64(scene.size), "the row did not hear of the last chunk")
        // The row believes the server has forgotten the upload by now: a reason to ask.
        try store.setUpload(row.id, url: row.uploadURL, expiresAt: 1_000)

        try await scene.startAgent()
        try await scene.expectCompletedIdentical()
        let stats = try await scene.stats()
        #expect(stats["patch_bytes"] as? Int == scene.size, "every byte went exactly once: \(stats["patch_bytes"] ?? "-")")
        #expect(try await scene.requests("POST") == 1, "no second upload was created")
        #expect(try await scene.completions() == 1)
        let done = try await scene.requireRow()
        #expect(done["sha256"] as? String == (try await scene.sha256(scene.file)))
        #expect(done.rowCounters["resumed_at"] as? Int == scene.size, "the last run found the upload whole: \(done.rowCounters)")
    }

    @Test("a server restored from a backup holds less than it confirmed: the upload goes back to what it holds, hashes the file again from its start, and completes identical")
    func serverHoldsLessThanConfirmed() async throws {
        let scene = try await UploadScene.make(size: 4 * oneMiB, stallSeconds: 300)
        try await scene.faults([InterruptionTests.passThrough(2), ["method": "PATCH", "stall_seconds": 200, "after_bytes": 100_000]])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        try await scene.watch("two chunks confirmed") { ($0["checkpoint_offset"] as? Int ?? 0) >= 2 * oneMiB }
        // Killed while the third chunk stalls; the server, killed next, forgets its faults.
        try await scene.killAgent()
        let store = try QueueStore(path: scene.session.databasePath)
        let row = try #require(try store.transfer(id: Int64(scene.id)))
        let uid = try #require(row.uploadURL?.split(separator: "/").last.map(String.init))
        // The server goes back to an older copy of its disk: the upload holds 512 KiB.
        try await offThePool {
            scene.server.kill()
            #expect(truncate(scene.server.data.path + "/tus/alice/\(uid)", off_t(oneMiB / 2)) == 0)
            try scene.server.restart()
        }

        try await scene.startAgent()
        try await scene.expectCompletedIdentical()
        #expect(try await scene.completions() == 1)
        #expect(scene.agentLog.contains("the server holds \(oneMiB / 2) bytes of the upload, fewer than the \(row.checkpoint.offset) it had confirmed"),
                "\(scene.agentLog.suffix(2000))")
        let done = try await scene.requireRow()
        #expect(done.rowCounters["resumed_at"] as? Int == oneMiB / 2, "sent from what the server held: \(done.rowCounters)")
        #expect(done["sha256"] as? String == (try await scene.sha256(scene.file)))
    }

    @Test("the expiry from every PATCH and HEAD reply is kept with the row")
    func expiryFromEveryReply() async throws {
        let scene = try await UploadScene.make(size: 5 * oneMiB, serverArguments: ["--expire-seconds", "3600"], stallSeconds: 120)
        // Chunk 2 takes over a second, so its reply carries a later expiry than the creation;
        // chunk 3 stalls while the row is read (long: a loaded machine may be slow to look).
        try await scene.faults([InterruptionTests.passThrough(1),
                                ["method": "PATCH", "stall_seconds": 1.2, "after_bytes": 0],
                                ["method": "PATCH", "stall_seconds": 100, "after_bytes": 100_000]])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        let store = try QueueStore(path: scene.session.databasePath)
        try await scene.watch("two chunks confirmed") { ($0["checkpoint_offset"] as? Int ?? 0) >= 2 * oneMiB }
        var row = try #require(try store.transfer(id: Int64(scene.id)))
        let afterPatch = try scene.serverExpiry(of: row)
        #expect(row.uploadExpiresAt == afterPatch, "the row keeps the last PATCH reply's expiry: row \(row.uploadExpiresAt ?? -1), server \(afterPatch)")

        try await scene.killAgent()
        try store.setUpload(row.id, url: row.uploadURL, expiresAt: 1_000)
        try await scene.clearFaults()
        try await scene.fault(["method": "PATCH", "stall_seconds": 100, "after_bytes": 100_000])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        row = try #require(try store.transfer(id: Int64(scene.id)))
        #expect(row.uploadExpiresAt == (try scene.serverExpiry(of: row)), "the row keeps the HEAD reply's expiry: \(row.uploadExpiresAt ?? -1)")
        #expect(row.counters.resumedAt >= 2 * Int64(oneMiB), "asked and resumed, not started again: \(row.counters)")

        try await scene.killAgent()
        try await scene.clearFaults()
        try await scene.startAgent()
        try await scene.expectCompletedIdentical()
        #expect(try await scene.completions() == 1)
    }

    // MARK: The local file's name

    @Test("the folder of a file renamed while it uploads: the upload reads on through its descriptor and completes, every byte sent once")
    func folderRenamedMidUpload() async throws {
        let scene = try await UploadScene.make(size: 3 * oneMiB, stallSeconds: 300)
        try await scene.faults([InterruptionTests.passThrough(1), ["method": "PATCH", "stall_seconds": 120, "after_bytes": 100_000]])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        let folder = (scene.file as NSString).deletingLastPathComponent
        #expect(rename(folder, folder + " (renamed)") == 0)
        try await scene.clearFaults()
        try await scene.watch("completed") { $0.rowState == "completed" }
        #expect(try await scene.sha256(scene.serverCopy) == (try await scene.sha256(folder + " (renamed)/" + scene.name)))
        #expect(try await scene.completions() == 1)
        #expect(try await scene.requests("POST") == 1, "one upload, never started again")
    }

    @Test("a file deleted while it uploads fails as source_missing, and nothing is made of it on the server")
    func fileDeletedMidUpload() async throws {
        let scene = try await UploadScene.make(size: 3 * oneMiB, stallSeconds: 300)
        try await scene.faults([InterruptionTests.passThrough(1), ["method": "PATCH", "stall_seconds": 120, "after_bytes": 100_000]])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        #expect(unlink(scene.file) == 0)
        try await scene.clearFaults()
        let s = try await scene.watch("failed") { $0.rowState == "failed" }
        #expect(s.row.rowReasonCode == "source_missing", "\(s.row.rowReason ?? [:])")
        #expect(s.row.rowReasonMessage?.contains("was deleted while it was being sent") == true, "\(s.row.rowReason ?? [:])")
        #expect(try await scene.completions() == 0)
    }

    // MARK: Folders and names on the server

    @Test("folders that do not exist are made level by level before the upload")
    func makesFolders() async throws {
        let scene = try await UploadScene.make(size: 300_000, folder: "New/Deep/Folder", makeFolder: false)
        try await scene.startAgent()
        try await scene.expectCompletedIdentical()
        #expect(try await scene.requests("MKCOL") == 3)
    }

    @Test("the folder deleted while its upload runs: the server refuses to complete it, the agent makes the folder again and finishes")
    func folderDeletedMidUpload() async throws {
        // The agent never gives up on the stalled chunk by itself: otherwise, on a loaded
        // machine, it could finish the upload before the test has removed the folder.
        let scene = try await UploadScene.make(size: 3 * oneMiB, stallSeconds: 300)
        try await scene.faults([InterruptionTests.passThrough(1), ["method": "PATCH", "stall_seconds": 120, "after_bytes": 100_000]])
        try await scene.startAgent()
        try await scene.waitForFaultsTaken()
        try FileManager.default.removeItem(atPath: scene.server.tree() + "/" + scene.folder)
        try await scene.clearFaults()
        try await scene.expectCompletedIdentical()
        #expect(try await scene.requests("MKCOL") == 1, "made again, once")
        #expect(scene.agentLog.contains("made /In again"), "\(scene.agentLog.suffix(1500))")
        #expect(try await scene.completions() == 1)
    }

    @Test("a different file at the target: the upload becomes name (1).ext, the file there is untouched")
    func differentFileThere() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        let theirs = TestData.bytes(count: 300_000, seed: 999)
        try Data(theirs).write(to: URL(fileURLWithPath: scene.serverCopy))
        try await scene.startAgent()
        try await scene.watch("completed") { $0.rowState == "completed" }
        #expect(try Data(contentsOf: URL(fileURLWithPath: scene.serverCopy)) == Data(theirs), "the file that was there is untouched")
        let ours = scene.server.tree() + "/In/IMG_0001 (1).jpg"
        #expect(try await scene.sha256(ours) == (try await scene.sha256(scene.file)))
        #expect(try await scene.requireRow()["target"] as? String == "/In/IMG_0001 (1).jpg", "the row names where it went")
        #expect(try await scene.completions("In/IMG_0001.jpg") == 0)
        #expect(try await scene.completions("In/IMG_0001 (1).jpg") == 1)
    }

    @Test("the same bytes already at the target: completed as already on the server, nothing sent")
    func sameFileThere() async throws {
        let scene = try await UploadScene.make(size: 300_000)
        try FileManager.default.copyItem(atPath: scene.file, toPath: scene.serverCopy)
        try await scene.startAgent()
        try await scene.expectCompletedIdentical()
        let posts = try await scene.requests("POST"), patches = try await scene.requests("PATCH")
        #expect(posts == 0 && patches == 0, "nothing was uploaded: \(posts) POST, \(patches) PATCH")
        #expect(try await scene.requireRow()["sha256"] as? String == (try await scene.sha256(scene.file)))
        #expect(scene.agentLog.contains("already on the server"), "\(scene.agentLog.suffix(1000))")
    }

    @Test("a server without checksums cannot say the bytes are the same: a file there means name (1).ext")
    func unknownFileThere() async throws {
        let scene = try await UploadScene.make(size: 300_000, serverArguments: ["--no-checksums"])
        try FileManager.default.copyItem(atPath: scene.file, toPath: scene.serverCopy)
        try await scene.startAgent()
        try await scene.watch("completed") { $0.rowState == "completed" }
        #expect(FileManager.default.fileExists(atPath: scene.server.tree() + "/In/IMG_0001 (1).jpg"))
        #expect(try await scene.completions("In/IMG_0001.jpg") == 0)
    }

    @Test("two queued files headed for one name: each gets its own, neither replaces the other")
    func twoRowsOneName() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Same")
            let s = try AgentHarness()
            try s.writeConfig(agentConfig())
            try s.addAccount(server)
            let a = try s.home.randomFile("a/photo.jpg", size: 2 * oneMiB, seed: 1)
            let b = try s.home.randomFile("b/photo.jpg", size: 2 * oneMiB, seed: 2)
            #expect(try s.cli(["upload", "--to", "/Same", a, b]).status == 0)
            try s.startAgent()
            try s.waitForAll("completed", count: 2)
            let stored = try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Same").sorted()
            #expect(stored == ["photo (1).jpg", "photo.jpg"])
            let digests = Set(try stored.map { try TestData.sha256(ofFile: server.tree() + "/Same/" + $0) })
            #expect(digests == Set([try TestData.sha256(ofFile: a), try TestData.sha256(ofFile: b)]), "both versions are there")
            let completions = (try server.stats()["completions"] as? [String: Any])?["alice"] as? [String: Int] ?? [:]
            #expect(completions == ["Same/photo.jpg": 1, "Same/photo (1).jpg": 1])
        }
    }
}

extension UploadScene {
    /// The server's statistics (`/_control/stats`).
    func stats() async throws -> [String: Any] {
        try await offThePool { HandedOver(try server.stats()) }.value
    }

    /// How many finished uploads the server placed at `path` (default: this scene's file).
    func completions(_ path: String? = nil) async throws -> Int {
        let all = try await stats()["completions"] as? [String: Any]
        let mine = all?["alice"] as? [String: Int] ?? [:]
        return mine[path ?? "\(folder)/\(name)"] ?? 0
    }

    /// Waits until the agent's log says `text`.
    func waitForLog(_ text: String, timeout: Double = 30) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if agentLog.contains(text) { return }
            if Date() >= deadline { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("the agent never said \"\(text)\"; log:\n\(agentLog.suffix(2000))")
    }

    /// The expiry the server holds for the row's upload, in milliseconds since the epoch.
    func serverExpiry(of row: Transfer) throws -> Int64 {
        let uid = try #require(row.uploadURL?.split(separator: "/").last.map(String.init),
                               "row \(row.id) has no upload (\(row.state.rawValue), \(row.reason?.description ?? "-")); agent log:\n\(agentLog.suffix(2500))")
        let info = try Data(contentsOf: URL(fileURLWithPath: server.data.path + "/tus/alice/\(uid).info"))
        let object = try #require(try JSONSerialization.jsonObject(with: info) as? [String: Any])
        let text = try #require(object["expires"] as? String)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        let date = try #require(formatter.date(from: text), "an HTTP date: \(text)")
        return Int64(date.timeIntervalSince1970 * 1000)
    }
}
