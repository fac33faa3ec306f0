import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing

@Suite("Scheduling: budgets, lanes, and servers that are busy")
struct SchedulingTests {
    func session(_ server: ReferenceServer, config: String = "[agent]\nautostart = false\n") throws -> AgentHarness {
        let s = try AgentHarness()
        try s.writeConfig(config)
        try s.addAccount(server)
        return s
    }

    @Test("with 40 uploads queued the server never sees more than three at once")
    func threeAtOnce() async throws {
        try await offThePool {
            let server = try ReferenceServer(arguments: ["--max-uploads-per-account", "10"])
            try server.makeFolder("Many")
            let s = try session(server, config: "[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 1\n")
            var files: [String] = []
            for i in 0..<40 { files.append(try s.home.randomFile("many/f\(i).bin", size: 600_000, seed: UInt64(i))) }
            #expect(try s.cli(["upload", "--to", "/Many"] + files).status == 0)
            try s.startAgent()
            try s.waitForAll("completed", count: 40, timeout: 120)
            let maxSeen = (try server.stats()["max_concurrent_patches"] as? [String: Any])?["alice"] as? Int
            #expect(maxSeen != nil && maxSeen! <= 3, "max concurrent PATCHes: \(String(describing: maxSeen))")
            #expect(maxSeen ?? 0 >= 2, "uploads did run side by side")
        }
    }

    @Test("a manual upload queued behind 1,000 auto-uploads starts at the next free slot")
    func manualJumpsTheQueue() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Camera")
            try server.makeFolder("Mine")
            let s = try session(server)
            // The backlog as the watcher would queue it.
            let store = try QueueStore(path: s.databasePath)
            let account = try #require(try store.account(named: "home"))
            var backlog: [NewTransfer] = []
            for i in 0..<1000 {
                let path = try s.home.randomFile("camera/IMG_\(i).jpg", size: 60_000, seed: UInt64(i))
                let fp = try FileFingerprint.of(LocalPath(path))
                backlog.append(NewTransfer(direction: .upload, origin: .auto, accountID: account.id, localPath: LocalPath(path),
                                           remotePath: "/Camera/IMG_\(i).jpg", bytesTotal: fp.size, fingerprint: fp))
            }
            try store.enqueue(backlog)
            // The first three auto-uploads hold every slot for a while, so the backlog is surely
            // still waiting when the manual one arrives, however slow the machine is.
            try server.fault(["method": "PATCH", "stall_seconds": 8, "after_bytes": 1000, "count": 3])
            try s.startAgent()
            try s.waitFor("the backlog to start") { items in items.filter { $0["state"] as? String == "in_progress" }.count == 3 }
            let mine = try s.home.file("mine.jpg", bytes: Array("by hand".utf8))
            #expect(try s.cli(["upload", "--to", "/Mine", mine]).status == 0)
            try s.waitFor("the manual upload") { items in
                items.contains { $0["name"] as? String == "mine.jpg" && $0["state"] as? String == "completed" }
            }
            let items = try s.items()
            let manual = try #require(items.first { $0["name"] as? String == "mine.jpg" })
            let manualStarted = try #require(manual["started_at"] as? String)
            let queuedAt = try #require(manual["created_at"] as? String)
            // Auto items started after the manual one was queued and before it started: at most
            // the ones already being dispatched in that same moment.
            let overtaking = items.filter {
                $0["origin"] as? String == "auto" && ($0["started_at"] as? String ?? "9") > queuedAt
                    && ($0["started_at"] as? String ?? "9") < manualStarted
            }
            #expect(overtaking.count <= 3, "\(overtaking.count) auto-uploads started ahead of the manual one")
            // The test means something only if a backlog was still waiting when the manual one came.
            let waiting = items.filter { $0["origin"] as? String == "auto" && ($0["started_at"] as? String ?? "9") > queuedAt }
            #expect(waiting.count > 20, "only \(waiting.count) auto-uploads were still waiting when the manual one was queued")
        }
    }

    @Test("a download is not starved by 400 queued uploads")
    func downloadsHaveTheirOwnBudget() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Up")
            try server.makeFolder("Docs")
            _ = FileManager.default.createFile(atPath: server.tree() + "/Docs/wanted.pdf", contents: Data("the document".utf8))
            let s = try session(server)
            var files: [String] = []
            for i in 0..<400 { files.append(try s.home.file("up/u\(i).txt", bytes: Array("upload \(i)".utf8))) }
            try s.cli(["upload", "--to", "/Up"] + files)
            try s.cli(["download", "/Docs/wanted.pdf"])
            try s.startAgent()
            try s.waitFor("the download") { items in
                items.contains { $0["direction"] as? String == "download" && $0["state"] as? String == "completed" }
            }
            let uploadsDone = try s.items().filter { $0["direction"] as? String == "upload" && $0["state"] as? String == "completed" }.count
            #expect(uploadsDone < 200, "the download waited for \(uploadsDone) uploads")
        }
    }

    @Test("a busy server (429) gets fewer uploads at once and its Retry-After is waited out")
    func easesOffABusyServer() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Busy")
            let s = try session(server)
            var files: [String] = []
            for i in 0..<6 { files.append(try s.home.randomFile("busy/b\(i).bin", size: 200_000, seed: UInt64(i))) }
            try server.fault(["method": "PATCH", "status": 429, "headers": ["Retry-After": "2"], "count": 3])
            try s.cli(["upload", "--to", "/Busy"] + files)
            try s.startAgent()
            try s.waitForAll("completed", count: 6, timeout: 60)
            #expect(s.agentLog.contains("the server is busy"))
        }
    }

    @Test("a server that takes three uploads at once per account (429 beyond), sent to by an agent set to six: after its first refusals the agent sends three at a time, and is not refused into a pause once a second")
    func learnsTheServersBound() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Bound")
            let s = try session(server, config: "[agent]\nautostart = false\n[transfers]\nuploads = 6\n")
            var files: [String] = []
            for i in 0..<120 { files.append(try s.home.randomFile("bound/b\(i).jpg", size: 3_000, seed: UInt64(i))) }
            try s.cli(["upload", "--to", "/Bound"] + files)
            // The first three PATCHes hold their places until the server has refused one, so
            // the agent meets the bound however slowly it starts its uploads (a sanitizer).
            try server.fault(["method": "PATCH", "stall_seconds": 120, "count": 3])
            try s.startAgent()
            let deadline = Date().addingTimeInterval(60)
            while refusals(try server.stats()) == 0 {
                guard Date() < deadline else { throw TestFailure("the server never refused: \(s.agentLog.suffix(2000))") }
                usleep(20_000)
            }
            try server.clearFaults()
            try s.waitForAll("completed", count: 120, timeout: 120)
            let stats = try server.stats()
            let refused = refusals(stats)
            // Six at once meet three refusals; each refusal bounds the agent to one fewer
            // than it had in flight, so a few more at most before it settles at three.
            #expect(refused <= 6, "the server refused \(refused) uploads as busy")
            #expect((stats["max_concurrent_patches"] as? [String: Any])?["alice"] as? Int == 3)
        }
    }

    /// The uploads the server refused as busy for alice so far.
    func refusals(_ stats: [String: Any]) -> Int { (stats["busy_refusals"] as? [String: Any])?["alice"] as? Int ?? 0 }

    @Test("the files a busy server (429) made wait do not wake the scheduler until its Retry-After ends")
    func busyServerIsWaitedOutAsleep() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Busy")
            let s = try session(server)
            var files: [String] = []
            for i in 0..<30 { files.append(try s.home.randomFile("busy/b\(i).jpg", size: 2_000, seed: UInt64(i))) }
            try server.fault(["method": "POST", "status": 429, "headers": ["Retry-After": "3"], "count": 100_000])
            try s.cli(["upload", "--to", "/Busy"] + files)
            try s.startAgent()
            try s.waitFor("files waiting for the busy server") { items in
                items.filter { ($0["reason"] as? [String: Any])?["code"] as? String == "server_busy" }.count >= 2
            }
            // Each row the agent lets go of the hold is counted, as the queue writes it.
            let db = try Database(path: s.databasePath)
            let counting = Date()
            try db.execute("""
                CREATE TABLE test_released (id INTEGER);
                CREATE TRIGGER test_count_releases AFTER UPDATE OF held_by ON transfers
                WHEN old.held_by IS NOT NULL AND new.held_by IS NULL BEGIN INSERT INTO test_released VALUES (new.id); END;
                """)
            // Its queued files are held and its retrying ones wait for the end of its wait:
            // the scheduler wakes for that, and for a try every 3 s (7 times in these 4 s).
            let woken = try s.schedulerWakeUps(over: 4)
            #expect(woken < 50, "the scheduler woke \(woken) times in 4 s")
            // One held file tries when a wait ends; letting them all go would write every row
            // twice per wait, to hold them again at the next 429.
            let released = try db.query("SELECT count(*) FROM test_released") { $0.int64(0) }.first ?? -1
            // Counted over the time that really passed: on a starved machine the 4 s run over.
            let counted = Date().timeIntervalSince(counting)
            let most = Int64((counted / 3).rounded(.up)) + 2
            #expect((1...most).contains(released), "\(released) held files let go in \(counted) s of waits of 3 s")
            try server.clearFaults()
            try s.waitForAll("completed", count: 30, timeout: 60)
        }
    }

    @Test("a file due to try again while the only upload slot is busy does not wake the scheduler until the slot frees")
    func dueFileWaitsForItsSlotAsleep() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Slot")
            let s = try session(server, config: "[agent]\nautostart = false\n[transfers]\nuploads = 1\nstall_seconds = 30\n")
            let first = try s.home.randomFile("slot/a.jpg", size: 300_000, seed: 1)
            let second = try s.home.randomFile("slot/b.jpg", size: 300_000, seed: 2)
            // The first file's creation fails once (it tries again 1 s later); the second then
            // takes the one slot, and its body stalls for 8 s.
            try server.fault(["method": "POST", "status": 500, "body": "try again", "count": 1])
            try server.fault(["method": "PATCH", "stall_seconds": 8, "after_bytes": 100_000, "count": 1])
            try s.cli(["upload", "--to", "/Slot", first, second])
            try s.startAgent()
            try s.waitFor("the first file retrying, the second under way") { items in
                items.contains { $0["name"] as? String == "a.jpg" && $0["state"] as? String == "retrying" }
                    && items.contains { $0["name"] as? String == "b.jpg" && $0["state"] as? String == "in_progress" }
            }
            usleep(1_500_000)
            // The first file is due and its slot taken: waking every 10 ms to find that out
            // again was 566 wake-ups in these 3 s; the second's progress written and the
            // batch's rate sampled are 12.
            let woken = try s.schedulerWakeUps(over: 3)
            #expect(woken < 50, "the scheduler woke \(woken) times in 3 s")
            try s.waitForAll("completed", count: 2, timeout: 60)
        }
    }

    @Test("a busy server's Retry-After holds new uploads to its end, though the uploads already under way complete meanwhile")
    func retryAfterOutlivesCompletions() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Busy")
            let s = try session(server)
            var files: [String] = []
            for i in 0..<6 { files.append(try s.home.randomFile("busy/r\(i).jpg", size: 300_000, seed: UInt64(i))) }
            // One upload of the first three is told to wait 30 s; the other two go through.
            try server.fault(["method": "PATCH", "status": 429, "headers": ["Retry-After": "30"], "count": 1])
            try s.cli(["upload", "--to", "/Busy"] + files)
            try s.startAgent()
            try s.waitFor("one upload told to wait") { items in
                items.contains { ($0["reason"] as? [String: Any])?["code"] as? String == "server_busy" }
            }
            usleep(4_000_000)
            let items = try s.items()
            let completed = items.filter { $0["state"] as? String == "completed" }.count
            #expect(completed <= 2, "\(completed) completed: the uploads that finished opened the server's wait early")
            #expect(items.filter { $0["state"] as? String == "queued" }.count >= 3, "\(items.map { $0["state"] ?? "" })")
        }
    }

    @Test("retry of a quota failure checks the space first and says what it found")
    func retryChecksQuota() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Full")
            let s = try session(server)
            let file = try s.home.randomFile("big.bin", size: 2_000_000)
            try server.setQuota(availableBytes: 1000)
            try s.cli(["upload", "--to", "/Full", file])
            try s.startAgent()
            try s.waitFor("a quota failure") { $0.first?["state"] as? String == "failed" }
            let id = try #require(try s.items().first?["id"] as? Int)
            let refused = try s.cli(["retry", String(id)])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("still not enough space"), "\(refused.stderr)")
            #expect(try s.items().first?["state"] as? String == "failed")
            try server.setQuota(availableBytes: nil)
            let accepted = try s.cli(["retry", String(id)])
            #expect(accepted.status == 0, "\(accepted.stderr)")
            try s.waitForAll("completed", count: 1)
        }
    }

    @Test("retry of a missing folder checks it, and --to sends the file somewhere else")
    func retryChecksFolder() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Elsewhere")
            let s = try session(server)
            let file = try s.home.file("note.txt", bytes: Array("a note".utf8))
            // The agent makes missing folders; this server refuses to.
            try server.fault(["method": "MKCOL", "status": 403, "count": 1000])
            try s.cli(["upload", "--to", "/Gone", file])
            try s.startAgent()
            try s.waitFor("a target_missing failure") { ($0.first?["reason"] as? [String: Any])?["code"] as? String == "target_missing" }
            let id = try #require(try s.items().first?["id"] as? Int)
            let refused = try s.cli(["retry", String(id)])
            #expect(refused.stderr.contains("still does not exist"), "\(refused.stderr)")
            #expect(try s.cli(["retry", String(id), "--to", "/Elsewhere"]).status == 0)
            try s.waitForAll("completed", count: 1)
            #expect(try String(contentsOfFile: server.tree() + "/Elsewhere/note.txt", encoding: .utf8) == "a note")
        }
    }
}
