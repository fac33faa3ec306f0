import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing

/// `pause` and `resume` end to end: the real programs, the agent, the reference server.
@Suite("Pause and resume")
struct PauseTests {
    /// Waits until the server has taken every pending fault: the request that took it is
    /// under way (a stall holds it in flight until the faults are cleared).
    static func waitUntilFaultTaken(_ server: ReferenceServer, _ session: AgentHarness) throws {
        let deadline = Date().addingTimeInterval(60)
        while true {
            if (try server.control("GET", "faults") as? [Any])?.isEmpty == true { return }
            if Date() >= deadline { break }
            usleep(50_000)
        }
        throw TestFailure("no request took the fault; agent log:\n\(session.agentLog.suffix(3000))")
    }

    static func patchBytes(_ server: ReferenceServer) throws -> Int { try server.stats()["patch_bytes"] as? Int ?? -1 }

    static func item(_ session: AgentHarness, _ id: Int) throws -> [String: Any] {
        try #require(try session.items().first { $0["id"] as? Int == id }, "no item #\(id)")
    }

    static func reasonCode(_ item: [String: Any]) -> String? { (item["reason"] as? [String: Any])?["code"] as? String }

    /// 500 MB with distinct bytes every 64 kB (a chunk sent to the wrong place would show), but
    /// mostly a hole: made at once, costing almost no disk.
    static func bigFile(_ path: String, size: Int) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw TestFailure("cannot create \(path)") }
        defer { close(fd) }
        ftruncate(fd, off_t(size))
        for offset in stride(from: 0, to: size - 32, by: 65_536) {
            let mark = Array("block at \(offset)\n".utf8)
            _ = mark.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        }
    }

    @Test("a 500 MB upload paused in flight sends no byte a second later and nothing is deleted; resumed, it completes identical from the server's offset, at most one chunk sent twice")
    func pauseBigUpload() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Big")
            let s = try AgentHarness()
            try s.writeConfig("[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 16\n")
            try s.addAccount(server)
            let size = 500_000_000
            let file = s.home.path + "/big.mov"
            try Self.bigFile(file, size: size)
            #expect(try s.cli(["upload", "--to", "/Big", file]).status == 0)
            let id = try #require(try s.items().first?["id"] as? Int)
            try s.startAgent()
            // Some chunks confirmed, then the next request is held in flight by a stall.
            let deadline = Date().addingTimeInterval(120)
            while try Self.patchBytes(server) < 24_000_000, Date() < deadline { usleep(20_000) }
            try server.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 1_000_000])
            try Self.waitUntilFaultTaken(server, s)

            // Bytes flow again from here: only the pause can stop them.
            try server.clearFaults()
            let asked = Date()
            let r = try s.cli(["pause", String(id)])
            #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
            #expect(r.stdout.contains("paused #\(id);") && !r.stdout.contains("stopping"), "\(r.stdout)")
            // Measured on the server: a second to stop, and a second of margin for a loaded machine.
            let settle = 2 - Date().timeIntervalSince(asked)
            if settle > 0 { usleep(useconds_t(settle * 1_000_000)) }
            let bytesThen = try Self.patchBytes(server)
            usleep(2_000_000)
            let bytesLater = try Self.patchBytes(server)
            #expect(bytesThen == bytesLater, "bytes reached the server after the pause: \(bytesThen) -> \(bytesLater)")
            #expect(bytesThen < size, "the upload was still in flight when paused")

            let paused = try Self.item(s, id)
            #expect(paused["state"] as? String == "queued" && paused["paused"] as? Bool == true && Self.reasonCode(paused) == "paused",
                    "\(paused)")
            let kept = paused["checkpoint_offset"] as? Int ?? 0
            #expect(kept >= 16_000_000, "the checkpoint is kept: \(kept)")
            let requests = (try server.stats()["requests"] as? [String: Any]) ?? [:]
            #expect(requests["DELETE"] == nil, "nothing was deleted on the server: \(requests)")
            let partial = ((try? FileManager.default.contentsOfDirectory(atPath: server.data.path + "/tus/alice")) ?? []).filter { !$0.hasPrefix(".") }
            #expect(!partial.isEmpty, "the server keeps the partial upload")
            let status = try s.cli(["status"])
            #expect(status.stdout.contains("1 paused by you"), "\(status.stdout)")

            let resumed = try s.cli(["resume", String(id)])
            #expect(resumed.status == 0 && resumed.stdout.contains("resumed #\(id)"), "\(resumed.stdout) \(resumed.stderr)")
            try s.waitForAll("completed", count: 1, timeout: 600)
            let done = try Self.item(s, id)
            let resumedAt = (done["counters"] as? [String: Any])?["resumed_at"] as? Int ?? 0
            #expect(resumedAt >= kept, "went on from the server's offset (\(resumedAt)), not from zero")
            #expect(done["paused"] as? Bool == false)
            let received = try Self.patchBytes(server)
            #expect(received <= size + 16 * 1_048_576, "the server received \(received) bytes for a file of \(size)")
            #expect(try TestData.sha256(ofFile: server.tree() + "/Big/big.mov") == (try TestData.sha256(ofFile: file)))
        }
    }

    @Test("paused items stay paused through an agent restart while newer work goes on, with or without an agent when paused; resumed, they complete")
    func survivesRestart() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Keep")
            let s = try AgentHarness()
            try s.addAccount(server)
            let a = try s.home.randomFile("a.bin", size: 3_000_000, seed: 1)
            let b = try s.home.randomFile("b.bin", size: 3_000_000, seed: 2)
            #expect(try s.cli(["upload", "--to", "/Keep", a, b]).status == 0)
            let ids = try s.items().compactMap { $0["id"] as? Int }.sorted()
            // No agent runs: the row is marked, and waits.
            let early = try s.cli(["pause", String(ids[1])])
            #expect(early.status == 0 && early.stdout.contains("paused #\(ids[1])"), "\(early.stdout) \(early.stderr)")

            try server.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 500_000])
            try s.startAgent()
            try Self.waitUntilFaultTaken(server, s)
            let r = try s.cli(["pause", String(ids[0])])
            #expect(r.status == 0 && r.stdout.contains("paused #\(ids[0])"), "\(r.stdout) \(r.stderr)")
            let status = try s.cli(["status"])
            #expect(status.status == 0 && status.stdout.contains("2 paused by you"), "\(status.stdout)")
            #expect(try s.cli(["pause", String(ids[0])]).stdout.contains("already paused"))

            s.stopAgent()
            try server.clearFaults()
            try s.startAgent()
            let c = try s.home.randomFile("c.bin", size: 1_000_000, seed: 3)
            #expect(try s.cli(["upload", "--to", "/Keep", c]).status == 0)
            // The agent ran the newer item: the older, paused ones were passed over.
            try s.waitFor("the newer item completed") { $0.contains { $0["state"] as? String == "completed" } }
            for id in ids {
                let row = try Self.item(s, id)
                #expect(row["state"] as? String == "queued" && row["paused"] as? Bool == true && Self.reasonCode(row) == "paused", "\(row)")
            }
            #expect(!FileManager.default.fileExists(atPath: server.tree() + "/Keep/a.bin"))
            #expect(try s.cli(["queue"]).stdout.contains("paused by you"))

            let resumed = try s.cli(["resume"] + ids.map(String.init))
            #expect(resumed.status == 0, "\(resumed.stdout) \(resumed.stderr)")
            try s.waitForAll("completed", count: 3)
            for (name, path) in [("a.bin", a), ("b.bin", b), ("c.bin", c)] {
                #expect(try TestData.sha256(ofFile: server.tree() + "/Keep/" + name) == (try TestData.sha256(ofFile: path)), "\(name)")
            }
        }
    }

    @Test("instant-upload stop ends a running agent at its last checkpoint; started again, the upload goes on from there and completes identical")
    func stopCommand() async throws {
        try await offThePool {
            // Without tus checksums, so that the server keeps what a PATCH broken off by the
            // stop delivered, and "goes on from there" is a position to check. With them, the
            // whole 3 MB file is one checksummed chunk, which the server rightly throws away
            // when it is broken off: the next agent's start from zero would then be correct,
            // and whether the chunk arrived whole after all depended on how much of it the
            // kernel's socket buffers held when the agent closed the connection.
            let server = try ReferenceServer(arguments: ["--no-checksums"])
            try server.makeFolder("Keep")
            let s = try AgentHarness()
            try s.addAccount(server)
            let a = try s.home.randomFile("a.bin", size: 3_000_000, seed: 4)
            #expect(try s.cli(["upload", "--to", "/Keep", a]).status == 0)
            #expect(try s.cli(["stop"]).stdout.contains("no agent is running"))

            try server.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 1_000_000])
            try s.startAgent()
            try Self.waitUntilFaultTaken(server, s)
            let pid = try #require(s.agentPID)
            let r = try s.cli(["stop"])
            #expect(r.status == 0 && r.stdout.contains("stopped the agent (pid \(pid))"), "\(r.stdout) \(r.stderr)")
            #expect(!s.agentIsRunning, "the agent had ended when stop returned")
            #expect(s.agentLog.contains("asked to stop"), "\(s.agentLog.suffix(2000))")
            let stopped = try #require(try s.items().first)
            #expect(stopped["state"] as? String == "queued", "back in the queue, not failed: \(stopped)")

            let firstLog = s.agentLog
            try server.clearFaults()
            try s.startAgent()
            try s.waitForAll("completed", count: 1)
            #expect(try TestData.sha256(ofFile: server.tree() + "/Keep/a.bin") == (try TestData.sha256(ofFile: a)))
            let done = try #require(try s.items().first)
            let resumedAt = (done["counters"] as? [String: Any])?["resumed_at"] as? Int ?? 0
            #expect(resumedAt >= 1_000_000, "went on from the server's offset (\(resumedAt)), not from zero")
            // The first megabyte the server held before the stop was not sent again. Should it
            // fail, what the server counted and what both agents said tell why.
            let sent = try Self.patchBytes(server)
            let counted = try server.stats()
            #expect(sent < 4_000_000, """
                resumed from what the server held: \(sent) bytes sent; server: \(counted)
                the stopped agent said:
                \(firstLog.suffix(3000))
                the agent started again said:
                \(s.agentLog.suffix(3000))
                """)
        }
    }

    @Test("pause --all stops what runs and holds the whole queue, new items included, until resume --all; status says paused by you")
    func pauseWholeQueue() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("All")
            let s = try AgentHarness()
            try s.addAccount(server)
            let a = try s.home.randomFile("a.bin", size: 3_000_000, seed: 4)
            #expect(try s.cli(["upload", "--to", "/All", a]).status == 0)
            try server.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 500_000])
            try s.startAgent()
            try Self.waitUntilFaultTaken(server, s)

            let r = try s.cli(["pause", "--all"])
            #expect(r.status == 0 && r.stdout.contains("paused the queue") && !r.stdout.contains("stopping"), "\(r.stdout) \(r.stderr)")
            try server.clearFaults()
            let first = try #require(try s.items().first)
            #expect(first["state"] as? String == "queued" && Self.reasonCode(first) == "paused", "\(first)")
            #expect(first["paused"] as? Bool == false, "held by the queue's pause, not its own")
            #expect(try s.cli(["pause", "--all"]).stdout.contains("already paused"))

            let b = try s.home.randomFile("b.bin", size: 1_000_000, seed: 5)
            #expect(try s.cli(["upload", "--to", "/All", b]).status == 0)
            let status = try s.cli(["status"])
            #expect(status.status == 0, "paused work waits for the person, not for help: \(status.stdout)")
            #expect(status.stdout.contains("2 paused by you") && status.stdout.contains("paused by you: nothing starts until"),
                    "\(status.stdout)")
            let json = try JSONSerialization.jsonObject(with: Data(try s.cli(["status", "--json"]).stdout.utf8)) as? [String: Any]
            #expect(json?["paused_reason"] as? String == "paused")
            #expect(try s.cli(["queue"]).stdout.contains("paused by you"))
            // Given time to start the new item, the agent leaves it alone.
            usleep(2_500_000)
            for item in try s.items() {
                #expect(item["state"] as? String == "queued" && Self.reasonCode(item) == "paused", "\(item)")
            }
            #expect(!FileManager.default.fileExists(atPath: server.tree() + "/All/b.bin"))

            let resumed = try s.cli(["resume", "--all"])
            #expect(resumed.status == 0 && resumed.stdout.contains("the queue goes on"), "\(resumed.stdout) \(resumed.stderr)")
            try s.waitForAll("completed", count: 2)
            #expect(try TestData.sha256(ofFile: server.tree() + "/All/a.bin") == (try TestData.sha256(ofFile: a)))
            #expect(try TestData.sha256(ofFile: server.tree() + "/All/b.bin") == (try TestData.sha256(ofFile: b)))
            #expect(!(try s.cli(["status"]).stdout.contains("paused")))
        }
    }

    @Test("run --until-idle does not wait for what the person paused; status says it waits for the person, and exits 0")
    func untilIdleLeavesPausedWork() async throws {
        try await offThePool {
            let s = try AgentHarness()
            let store = try QueueStore(path: s.databasePath)
            let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:9/dav/", tusURL: "http://127.0.0.1:9/files/", username: "a")
            let ids = try store.enqueue([NewTransfer(direction: .upload, origin: .manual, accountID: account.id, localPath: LocalPath("/a"),
                                                     remotePath: "/a", bytesTotal: 1)])
            #expect(try s.cli(["pause", String(ids[0])]).status == 0)
            let status = try s.cli(["status"])
            #expect(status.status == 0 && status.stdout.contains("1 paused by you"), "\(status.stdout)")
            let (exe, args) = (Repository.binaries + "/instant-upload", ["run", "--until-idle"])
            let agent = try ChildProcess(exe, args, environment: s.environment, error: .file(s.home.path + "/until-idle.log"))
            let exited = agent.wait(seconds: 30)
            if !exited { agent.stop() }
            #expect(exited && agent.terminationStatus == 0, "the agent waited for paused work")
            #expect(try store.transfer(id: ids[0])?.state == .queued)
        }
    }

    @Test("the person's pause of the queue shows in status at once, before the agent has looked")
    func statusBeforeTheAgentLooks() async throws {
        try await offThePool {
            let s = try AgentHarness()
            try s.startAgent()
            #expect(try s.cli(["pause", "--all"]).status == 0)
            let status = try s.cli(["status", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            #expect(object?["paused_reason"] as? String == "paused", "\(status.stdout)")
            #expect(try s.cli(["resume", "--all"]).stdout.contains("the queue goes on"))
            #expect(try s.cli(["resume", "--all"]).stdout.contains("nothing is paused"))
        }
    }

    @Test("a paused download keeps its .part and resumes from it")
    func pauseDownload() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            let content = TestData.bytes(count: 12_000_000, seed: 6)
            try FileManager.default.createDirectory(atPath: server.tree() + "/Videos", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: server.tree() + "/Videos/clip.mp4", contents: Data(content))
            let s = try AgentHarness()
            try s.addAccount(server)
            try server.fault(["method": "GET", "path_prefix": "/dav/", "stall_seconds": 120, "after_bytes": 5_000_000])
            #expect(try s.cli(["download", "/Videos/clip.mp4"]).status == 0)
            let id = try #require(try s.items().first?["id"] as? Int)
            try s.startAgent()
            try Self.waitUntilFaultTaken(server, s)
            let part = s.downloads + "/clip.mp4.part"
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, ((try? FileManager.default.attributesOfItem(atPath: part)[.size] as? Int) ?? 0) < 4_000_000 {
                usleep(50_000)
            }
            #expect(try s.cli(["pause", String(id)]).status == 0)
            try server.clearFaults()
            let paused = try Self.item(s, id)
            #expect(paused["state"] as? String == "queued" && Self.reasonCode(paused) == "paused", "\(paused)")
            let kept = (try? FileManager.default.attributesOfItem(atPath: part)[.size] as? Int) ?? 0
            #expect(kept >= 4_000_000, "the .part is kept: \(kept) bytes")

            #expect(try s.cli(["resume", String(id)]).status == 0)
            try s.waitForAll("completed", count: 1)
            let done = try Self.item(s, id)
            #expect(((done["counters"] as? [String: Any])?["resumed_at"] as? Int ?? 0) >= 4_000_000, "resumed from the .part")
            #expect(try TestData.sha256(ofFile: s.downloads + "/clip.mp4") == (try TestData.sha256(ofFile: server.tree() + "/Videos/clip.mp4")))
        }
    }
}
