import Foundation
import Glibc
import TestSupport
import Testing

@Suite("Downloads end to end, against the reference server")
struct DownloadTests {
    func setUp(_ files: [String: [UInt8]]) throws -> (ReferenceServer, AgentHarness) {
        let server = try ReferenceServer()
        for (name, bytes) in files {
            let path = server.tree() + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
        }
        let session = try AgentHarness()
        try session.writeConfig("[agent]\nautostart = false\n[transfers]\nstall_seconds = 3\n")
        try session.addAccount(server)
        return (server, session)
    }

    func waitForPart(_ session: AgentHarness, atLeast bytes: Int, name: String) throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: session.downloads + "/" + name + ".part")[.size] as? Int) ?? 0
            if size >= bytes { return }
            usleep(50_000)
        }
        throw TestFailure("no .part of \(bytes) bytes appeared; log: \(session.agentLog.suffix(2000))")
    }

    @Test("resumes from the .part's length after the agent is SIGKILLed, and the file is whole")
    func resumeAfterKill() throws {
        let content = TestData.bytes(count: 12_000_000, seed: 3)
        let (server, session) = try setUp(["Videos/clip.mp4": content])
        try server.fault(["method": "GET", "path_prefix": "/dav/", "stall_seconds": 60, "after_bytes": 5_000_000, "count": 1])
        #expect(try session.cli(["download", "/Videos/clip.mp4"]).status == 0)
        try session.startAgent()
        try waitForPart(session, atLeast: 4_000_000, name: "clip.mp4")
        session.killAgent()
        try server.clearFaults()
        #expect(!FileManager.default.fileExists(atPath: session.downloads + "/clip.mp4"), "no complete-looking file before it is whole")
        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        let item = try #require(try session.items().first)
        #expect(item["local_path"] as? String == session.downloads + "/clip.mp4")
        #expect(((item["counters"] as? [String: Any])?["resumed_at"] as? Int ?? 0) >= 4_000_000, "resumed, not restarted")
        #expect(try TestData.sha256(ofFile: session.downloads + "/clip.mp4") == (try TestData.sha256(ofFile: server.tree() + "/Videos/clip.mp4")))
        #expect(!FileManager.default.fileExists(atPath: session.downloads + "/clip.mp4.part"))
    }

    /// Queues a download of `path` and kills the agent after the file was linked into place,
    /// before its row completed (the agent waits there under a test hook).
    func killInsideTheMoveWindow(_ session: AgentHarness, downloading path: String) throws {
        let queued = try session.cli(["download", path])
        try #require(queued.status == 0, "\(queued.stderr)")
        session.environment["INSTANT_UPLOAD_TEST_PAUSE"] = "download-in-place"
        try session.startAgent()
        let deadline = Date().addingTimeInterval(30)
        while !session.agentLog.contains("paused at download-in-place"), Date() < deadline { usleep(50_000) }
        try #require(session.agentLog.contains("paused at download-in-place"), "\(session.agentLog.suffix(2000))")
        session.killAgent()
        session.environment.removeValue(forKey: "INSTANT_UPLOAD_TEST_PAUSE")
    }

    @Test("killed after the file moved into place but before the row completed: the restart recognises it, no second copy, no second download")
    func killedAfterMoveIntoPlace() throws {
        let content = TestData.bytes(count: 3_000_000, seed: 5)
        let (server, session) = try setUp(["Docs/report.pdf": content])
        try killInsideTheMoveWindow(session, downloading: "/Docs/report.pdf")
        let left = try FileManager.default.contentsOfDirectory(atPath: session.downloads).sorted()
        #expect(left == ["report.pdf", "report.pdf.part"], "killed inside the window: \(left)")

        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: session.downloads) == ["report.pdf"], "one copy, no .part")
        #expect(try Data(contentsOf: URL(fileURLWithPath: session.downloads + "/report.pdf")) == Data(content))
        let item = try #require(try session.items().first)
        #expect(item["local_path"] as? String == session.downloads + "/report.pdf")
        #expect(item["sha256"] as? String == (try TestData.sha256(ofFile: server.tree() + "/Docs/report.pdf")))
        let gets = ((try server.stats()["requests"] as? [String: Any])?["GET"] as? Int) ?? 0
        #expect(gets == 1, "downloaded once, not again: \(gets) GETs")
    }

    @Test("killed in the same window, then the file in place replaced by another of the same size: it is not taken for ours, kept, and ours goes beside it")
    func replacedInsideTheWindow() throws {
        let content = TestData.bytes(count: 3_000_000, seed: 6)
        let (server, session) = try setUp(["Docs/report.pdf": content])
        defer { withExtendedLifetime(server) {} }
        try killInsideTheMoveWindow(session, downloading: "/Docs/report.pdf")
        // The person puts another file of the very same size at that name before the agent is back.
        let theirs = TestData.bytes(count: 3_000_000, seed: 7)
        let placed = session.downloads + "/report.pdf"
        try FileManager.default.removeItem(atPath: placed)
        FileManager.default.createFile(atPath: placed, contents: Data(theirs))

        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: placed)) == Data(theirs), "the person's file is untouched")
        let item = try #require(try session.items().first)
        let ours = try #require(item["local_path"] as? String)
        #expect(ours != placed, "the row does not claim the person's file")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ours)) == Data(content))
        #expect(!FileManager.default.fileExists(atPath: placed + ".part"))
    }

    @Test("a file that changed on the server while paused starts over instead of being stitched")
    func changedOnServer() throws {
        let (server, session) = try setUp(["Docs/data.bin": TestData.bytes(count: 8_000_000, seed: 1)])
        try server.fault(["method": "GET", "path_prefix": "/dav/", "stall_seconds": 60, "after_bytes": 3_000_000, "count": 1])
        try session.cli(["download", "/Docs/data.bin"])
        try session.startAgent()
        try waitForPart(session, atLeast: 2_000_000, name: "data.bin")
        session.killAgent()
        try server.clearFaults()
        let fresh = TestData.bytes(count: 7_000_000, seed: 2)
        FileManager.default.createFile(atPath: server.tree() + "/Docs/data.bin", contents: Data(fresh))
        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        let got = try Data(contentsOf: URL(fileURLWithPath: session.downloads + "/data.bin"))
        #expect(got == Data(fresh))
    }

    @Test("a name already taken here becomes name (1).ext and the first file is untouched")
    func numberedSuffix() throws {
        let (server, session) = try setUp(["Docs/report.pdf": Array("from the server".utf8)])
        defer { withExtendedLifetime(server) {} }
        try FileManager.default.createDirectory(atPath: session.downloads, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: session.downloads + "/report.pdf", contents: Data("mine".utf8))
        for _ in 0..<2 {
            let r = try session.cli(["download", "/Docs/report.pdf"])
            #expect(r.status == 0, "\(r.stderr)")
        }
        try session.startAgent()
        try session.waitForAll("completed", count: 2)
        #expect(try String(contentsOfFile: session.downloads + "/report.pdf", encoding: .utf8) == "mine")
        #expect(try String(contentsOfFile: session.downloads + "/report (1).pdf", encoding: .utf8) == "from the server")
        #expect(try String(contentsOfFile: session.downloads + "/report (2).pdf", encoding: .utf8) == "from the server")
        let shown = try session.cli(["queue", "--state", "completed"]).stdout
        #expect(shown.contains("report (1).pdf") && shown.contains("report (2).pdf"), "the queue names the final paths")
    }

    @Test("Local Drive keeps its mode: made 0755 for a first download, a world-writable one tightened to 0755, a private one left 0700", arguments: [
        nil, 0o777, 0o700,
    ] as [mode_t?])
    func localDriveMode(existing: mode_t?) throws {
        let (server, session) = try setUp(["Docs/r.pdf": TestData.bytes(count: 5000, seed: 2)])
        defer { withExtendedLifetime(server) {} }
        if let existing {
            try FileManager.default.createDirectory(atPath: session.downloads, withIntermediateDirectories: true)
            chmod(session.downloads, existing)
        }
        #expect(try session.cli(["download", "/Docs/r.pdf"]).status == 0)
        try session.startAgent()
        try session.waitForAll("completed", count: 1, timeout: 60)
        var st = stat()
        #expect(stat(session.downloads, &st) == 0)
        let expected: mode_t = existing == 0o700 ? 0o700 : 0o755
        #expect(st.st_mode & 0o7777 == expected, "Local Drive is \(String(st.st_mode & 0o7777, radix: 8)), not \(String(expected, radix: 8))")
        #expect(FileManager.default.fileExists(atPath: session.downloads + "/r.pdf"))
    }

    @Test("a folder is refused with a clear message and nothing is written")
    func folderRefused() throws {
        let (server, session) = try setUp([:])
        try server.makeFolder("Photos/2026")
        let r = try session.cli(["download", "/Photos/2026"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("folders can't be downloaded as one file: download the files inside it"))
        #expect(try session.items().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: session.downloads))
    }

    @Test("a name from the server that would hide itself or leave the folder is made safe")
    func hostileNames() throws {
        let (server, session) = try setUp(["Shared/.bashrc": Array("x".utf8), "Shared/..profile": Array("y".utf8)])
        defer { withExtendedLifetime(server) {} }
        let queued = try session.cli(["download", "/Shared/.bashrc", "/Shared/..profile"])
        #expect(queued.status == 0, "\(queued.stderr)")
        try session.startAgent()
        try session.waitForAll("completed", count: 2)
        let names = try FileManager.default.contentsOfDirectory(atPath: session.downloads).sorted()
        #expect(names == ["bashrc", "profile"])
        let escape = try session.cli(["download", "/../alice/Shared/.bashrc"])
        #expect(escape.status != 0)
    }
}
