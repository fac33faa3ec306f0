import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing

/// The scheduler keeps going: held rows never hide others, a hung server's DELETE never
/// holds up the queue, and a locked or full database is waited out instead of ending the agent.
@Suite("The scheduler keeps going")
struct SchedulerResilienceTests {
    static func reasonCode(_ item: [String: Any]) -> String? { (item["reason"] as? [String: Any])?["code"] as? String }

    /// Two accounts on one server: `camera` (alice) and `work` (bob).
    /// A reference server with the users of `twoAccounts`.
    static func aliceAndBob() throws -> ReferenceServer {
        try ReferenceServer(users: [("alice", "wonderland"), ("bob", "builder")])
    }

    func twoAccounts(_ server: ReferenceServer, config: String, cameraWifiOnly: Bool = false) throws -> AgentHarness {
        let s = try AgentHarness()
        try s.writeConfig(config)
        var add = ["account", "add", "--webdav", server.webdavURL("alice"), "--tus", server.tusURL, "--user", "alice", "--name", "camera",
                   "--password-stdin"]
        if cameraWifiOnly { add.append("--wifi-only") }
        let a = try s.cli(add, stdin: "wonderland\n")
        guard a.status == 0 else { throw TestFailure("account add camera: \(a.stderr)") }
        try s.addAccount(server, user: "bob", password: "builder", name: "work")
        return s
    }

    /// 1,000 auto-uploads for `camera` written as the watcher would, then one for `work`.
    func backlog(_ s: AgentHarness) throws -> String {
        let store = try QueueStore(path: s.databasePath)
        let camera = try #require(try store.account(named: "camera"))
        let work = try #require(try store.account(named: "work"))
        let picture = try s.home.randomFile("camera/IMG.jpg", size: 20_000)
        let fp = try FileFingerprint.of(LocalPath(picture))
        try store.enqueue((0..<1000).map {
            NewTransfer(direction: .upload, origin: .auto, accountID: camera.id, localPath: LocalPath(picture),
                        remotePath: "/Camera/IMG_\($0).jpg", bytesTotal: fp.size, fingerprint: fp)
        })
        let theirs = try s.home.randomFile("work/report.pdf", size: 30_000, seed: 9)
        let fpB = try FileFingerprint.of(LocalPath(theirs))
        try store.enqueue([NewTransfer(direction: .upload, origin: .auto, accountID: work.id, localPath: LocalPath(theirs),
                                       remotePath: "/Work/report.pdf", bytesTotal: fpB.size, fingerprint: fpB)])
        return theirs
    }

    @Test("1,000 rows held by a Wi-Fi rule for one account never keep another account's row from starting")
    func wifiHeldRowsDoNotBlockOthers() async throws {
        try await offThePool {
            let server = try Self.aliceAndBob()
            try server.makeFolder("Camera")
            try server.makeFolder("Work", user: "bob")
            // No interface here is wireless: the Wi-Fi rule holds, whatever this machine has.
            let sysfs = TemporaryFolder("iu-sysfs")
            let s = try twoAccounts(server, config: "[agent]\nautostart = false\n[network]\nsysfs_root = \(sysfs.path)\n", cameraWifiOnly: true)
            let theirs = try backlog(s)
            try s.startAgent()
            try s.waitFor("the other account's row done", timeout: 30) { items in
                items.contains { $0["name"] as? String == "report.pdf" && $0["state"] as? String == "completed" }
            }
            #expect(try TestData.sha256(ofFile: server.tree("bob") + "/Work/report.pdf") == (try TestData.sha256(ofFile: theirs)))
            try s.waitFor("every held row saying why", timeout: 10) { items in
                items.filter { $0["state"] as? String == "queued" && Self.reasonCode($0) == "wifi" }.count == 1000
            }
        }
    }

    @Test("1,000 rows of an account whose server said 429 never keep another account's row from starting")
    func busyAccountDoesNotBlockOthers() async throws {
        try await offThePool {
            let server = try Self.aliceAndBob()
            try server.makeFolder("Camera")
            try server.makeFolder("Work", user: "bob")
            let s = try twoAccounts(server, config: "[agent]\nautostart = false\n")
            let theirs = try backlog(s)
            // alice's server is busy for ten minutes; bob's is fine.
            try server.fault(["method": "POST", "user": "alice", "status": 429, "headers": ["Retry-After": "600"], "count": 1000])
            try s.startAgent()
            try s.waitFor("the other account's row done", timeout: 30) { items in
                items.contains { $0["name"] as? String == "report.pdf" && $0["state"] as? String == "completed" }
            }
            #expect(try TestData.sha256(ofFile: server.tree("bob") + "/Work/report.pdf") == (try TestData.sha256(ofFile: theirs)))
            // Held for the ten minutes it asked, saying so: the scheduler's query does not read
            // past them for the other account's files meanwhile.
            try s.waitFor("the busy account's rows waiting, saying why", timeout: 10) { items in
                items.filter { Self.reasonCode($0) == "server_busy" }.count == 1000
            }
            let store = try QueueStore(path: s.databasePath)
            let camera = try #require(try store.account(named: "camera"))
            #expect(try store.heldScopes() == [.account(camera.id)])
            #expect(try store.runnable(direction: .upload, now: nowMilliseconds(), limit: 10).isEmpty)
        }
    }

    @Test("two accounts of one server, each with a folder of the same name: what one account's listing showed is never taken for the other's, so a file already in the second is not sent again")
    func listingsAreEachAccountsOwn() async throws {
        try await offThePool {
            let server = try Self.aliceAndBob()
            try server.makeFolder("P")
            try server.makeFolder("P", user: "bob")
            let s = try twoAccounts(server, config: "[agent]\nautostart = false\n")
            let mine = try s.home.randomFile("a/a.jpg", size: 100_000, seed: 1)
            let theirs = try s.home.randomFile("b/b.jpg", size: 100_000, seed: 2)
            try FileManager.default.copyItem(atPath: theirs, toPath: server.tree("bob") + "/P/b.jpg")
            #expect(try s.cli(["upload", "--account", "camera", "--to", "/P", mine]).status == 0)
            try s.startAgent()
            try s.waitForAll("completed", count: 1)
            // Within the time a listing is used: bob's /P is not alice's.
            #expect(try s.cli(["upload", "--account", "work", "--to", "/P", theirs]).status == 0)
            try s.waitForAll("completed", count: 2)
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree("bob") + "/P") == ["b.jpg"], "no second copy")
            #expect(s.agentLog.contains("/P/b.jpg is already on the server with the same content"), "\(s.agentLog.suffix(1500))")
        }
    }

    @Test("a server that hangs on the DELETE of a cancelled upload holds up nothing else")
    func cancelDeleteRunsAside() async throws {
        try await offThePool {
            let hung = try ReferenceServer()
            try hung.makeFolder("Big")
            let other = try ReferenceServer()
            try other.makeFolder("Docs")
            let s = try AgentHarness()
            try s.writeConfig(agentConfig(stallSeconds: 30))
            try s.addAccount(hung, name: "home")
            try s.addAccount(other, name: "work")
            let big = try s.home.randomFile("big.mov", size: 3_000_000)
            try hung.fault(["method": "PATCH", "stall_seconds": 60, "after_bytes": 200_000])
            #expect(try s.cli(["upload", "--account", "home", "--to", "/Big", big]).status == 0)
            try s.startAgent()
            try s.waitFor("the upload under way") { ($0.first?["bytes_done"] as? Int ?? 0) > 100_000 }
            let id = try #require(try s.items().first?["id"] as? Int)

            // The server stops answering: the DELETE that ends the cancelled upload hangs.
            hung.suspend()
            defer { hung.resume() }
            #expect(try s.cli(["cancel", String(id)]).status == 0)
            let note = try s.home.file("note.txt", bytes: Array("meanwhile".utf8))
            #expect(try s.cli(["upload", "--account", "work", "--to", "/Docs", note]).status == 0)
            try s.waitFor("the other upload done while the DELETE hangs", timeout: 25) { items in
                items.contains { $0["name"] as? String == "note.txt" && $0["state"] as? String == "completed" }
            }
            #expect(try s.items().contains { $0["id"] as? Int == id }, "the cancelled row is removed only once the server answered")
            hung.resume()
            try s.waitFor("the cancelled row gone once the server answers", timeout: 40) { items in
                !items.contains { $0["id"] as? Int == id }
            }
            #expect(s.agentIsRunning)
        }
    }

    @Test("a queue database locked by another program longer than the busy timeout is waited out")
    func lockedDatabaseIsWaitedOut() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("In")
            let s = try AgentHarness()
            try s.addAccount(server)
            let file = try s.home.randomFile("a.jpg", size: 200_000)
            #expect(try s.cli(["upload", "--to", "/In", file]).status == 0)
            // Another program takes the write lock and keeps it past SQLite's 10 s busy timeout.
            let other = try Database(path: s.databasePath)
            try other.execute("BEGIN IMMEDIATE")
            try s.startAgent()
            usleep(13_000_000)
            #expect(s.agentIsRunning, "the agent stopped on a busy database: \(s.agentLog.suffix(2000))")
            try other.execute("ROLLBACK")
            try s.waitForAll("completed", count: 1, timeout: 60)
            #expect(try TestData.sha256(ofFile: server.tree() + "/In/a.jpg") == (try TestData.sha256(ofFile: file)))
            #expect(s.agentLog.contains("the queue database did not answer"), "\(s.agentLog.suffix(2000))")
            #expect(s.agentIsRunning)
        }
    }

    @Test("the queue database locked by another program while an upload runs: the upload waits for it, then completes, nothing sent twice")
    func lockedWhileUploading() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("In")
            let s = try AgentHarness()
            try s.writeConfig("[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 1\nstall_seconds = 300\n")
            try s.addAccount(server)
            let file = try s.home.randomFile("a.jpg", size: 300_000)
            // The only chunk stalls on the server until the test has locked the queue.
            try server.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 100_000])
            #expect(try s.cli(["upload", "--to", "/In", file]).status == 0)
            try s.startAgent()
            try Poll.until("the chunk to reach the stall", seconds: 30) {
                (try server.control("GET", "faults") as? [Any])?.isEmpty == true
            }
            // Another program holds the write lock past SQLite's 10 s busy timeout while the
            // chunk goes on: the agent cannot record its checkpoint, nor the end.
            let other = try Database(path: s.databasePath)
            try other.execute("BEGIN IMMEDIATE")
            try server.clearFaults()
            usleep(13_000_000)
            #expect(s.agentIsRunning, "the agent stopped on a busy database: \(s.agentLog.suffix(2000))")
            try other.execute("ROLLBACK")
            try s.waitForAll("completed", count: 1, timeout: 60)
            #expect(try TestData.sha256(ofFile: server.tree() + "/In/a.jpg") == (try TestData.sha256(ofFile: file)))
            let stats = try server.stats()
            #expect(((stats["requests"] as? [String: Any])?["POST"] as? Int) == 1 && stats["patch_bytes"] as? Int == 300_000, "one upload, nothing sent twice: \(stats)")
            #expect(s.agentLog.contains("the queue database could not be written for a moment"), "\(s.agentLog.suffix(2000))")
        }
    }

    @Test("the queue database locked by another program while a download runs: its bytes keep flowing, and it completes")
    func lockedWhileDownloading() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            let content = TestData.bytes(count: 12_000_000, seed: 5)
            try FileManager.default.createDirectory(atPath: server.tree() + "/Docs", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: server.tree() + "/Docs/film.mkv", contents: Data(content))
            let s = try AgentHarness()
            try s.writeConfig(agentConfig(stallSeconds: 30))
            try s.addAccount(server)
            // About 4 MB a second: three seconds for the whole file. A transfer that wrote its
            // progress to the locked queue from its callbacks would stop for SQLite's 10 s busy
            // timeout every quarter of a second, and need minutes.
            try server.fault(["method": "GET", "path_prefix": "/dav/", "bytes_per_second": 4_000_000])
            #expect(try s.cli(["download", "/Docs/film.mkv"]).status == 0)
            try s.startAgent()
            let part = s.downloads + "/film.mkv.part"
            func arrived() -> Int { (try? FileManager.default.attributesOfItem(atPath: part)[.size] as? Int) ?? 0 }
            try Poll.until("the download under way", seconds: 30) { arrived() > 0 }
            // Another program holds the write lock from now until every byte has arrived.
            let other = try Database(path: s.databasePath)
            try other.execute("BEGIN IMMEDIATE")
            try Poll.until("the whole file in the .part while the queue is locked", seconds: 40) { arrived() == content.count }
            try other.execute("ROLLBACK")
            try s.waitForAll("completed", count: 1, timeout: 60)
            #expect(try TestData.sha256(ofFile: s.downloads + "/film.mkv") == (try TestData.sha256(ofFile: server.tree() + "/Docs/film.mkv")))
            #expect(s.agentIsRunning)
        }
    }

    @Test("a full disk pauses the queue as disk_full without ending the agent; with room again everything completes")
    func fullDiskPausesTheQueue() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("In")
            let s = try AgentHarness()
            // The queue lives on a small filesystem of its own that the test fills up.
            let disk = try SmallDisk(at: s.home.path + "/state", megabytes: 4)
            defer { s.killAgent(); disk.unmount() }
            try s.writeConfig("[agent]\nautostart = false\n[transfers]\nuploads = 1\nchunk_size_mb = 1\nstall_seconds = 30\n")
            try s.addAccount(server)
            let first = try s.home.randomFile("first.mov", size: 2_500_000, seed: 1)
            let second = try s.home.randomFile("second.jpg", size: 100_000, seed: 2)
            // The first chunk stalls on the server long enough for the disk to fill meanwhile.
            try server.fault(["method": "PATCH", "stall_seconds": 6, "after_bytes": 200_000])
            #expect(try s.cli(["upload", "--to", "/In", first, second]).status == 0)
            try s.startAgent()
            try s.waitFor("the first upload under way") { items in
                items.contains { $0["name"] as? String == "first.mov" && ($0["bytes_done"] as? Int ?? 0) > 0 }
            }
            try disk.fill()

            try Poll.until("status to say the disk is full", seconds: 40) {
                let status = try s.cli(["status", "--json"])
                return status.stdout.contains("\"paused_reason\" : \"disk_full\"") || status.stdout.contains("\"paused_reason\":\"disk_full\"")
            }
            #expect(s.agentIsRunning, "the agent ended on a full disk: \(s.agentLog.suffix(2000))")
            #expect(!FileManager.default.fileExists(atPath: server.tree() + "/In/second.jpg"), "nothing starts while the disk is full")
            #expect(try s.cli(["status"]).stdout.contains("disk is full"))

            try disk.makeRoom()
            try s.waitForAll("completed", count: 2, timeout: 60)
            for (name, file) in [("first.mov", first), ("second.jpg", second)] {
                #expect(try TestData.sha256(ofFile: server.tree() + "/In/" + name) == (try TestData.sha256(ofFile: file)))
            }
            #expect(!(try s.cli(["status", "--json"]).stdout.contains("disk_full")))
            #expect(s.agentIsRunning)
        }
    }

    @Test("cancel with no agent running removes the download's .part as well as the row")
    func cancelWithoutAgentRemovesPart() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Docs")
            let content = TestData.bytes(count: 2_000_000, seed: 3)
            _ = FileManager.default.createFile(atPath: server.tree() + "/Docs/big.bin", contents: Data(content))
            let s = try AgentHarness()
            try s.writeConfig(agentConfig(stallSeconds: 30))
            try s.addAccount(server)
            try server.fault(["method": "GET", "stall_seconds": 30, "after_bytes": 500_000])
            #expect(try s.cli(["download", "/Docs/big.bin"]).status == 0)
            try s.startAgent()
            let part = s.downloads + "/big.bin.part"
            try Poll.until("part of the download on disk", seconds: 30) {
                ((try? FileManager.default.attributesOfItem(atPath: part)[.size] as? Int) ?? 0) > 0
            }
            s.stopAgent()
            #expect(FileManager.default.fileExists(atPath: part))
            let id = try #require(try s.items().first?["id"] as? Int)
            let r = try s.cli(["cancel", String(id)])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try s.items().isEmpty)
            #expect(!FileManager.default.fileExists(atPath: part), "the .part is left behind")
        }
    }
}

/// A tmpfs of its own (root only, as in CI), to fill up for real.
final class SmallDisk {
    let path: String
    private var filler: String { path + "/filler" }

    init(at path: String, megabytes: Int) throws {
        guard getuid() == 0 else { throw TestFailure("a full disk is made with a tmpfs mount, which needs root (CI runs as root)") }
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Shell.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", path])
    }

    /// Writes until the filesystem says ENOSPC.
    func fill() throws {
        let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw TestFailure("cannot create \(filler)") }
        defer { close(fd) }
        let block = [UInt8](repeating: 0, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        guard errno == ENOSPC else { throw TestFailure("filling \(path) stopped with errno \(errno), not ENOSPC") }
    }

    func makeRoom() throws { try FileManager.default.removeItem(atPath: filler) }

    func unmount() {
        _ = try? Shell.run("/usr/bin/umount", ["-l", path])
    }
}
