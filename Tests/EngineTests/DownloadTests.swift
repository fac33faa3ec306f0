import Foundation
import Glibc
import TestSupport
import Testing

@Suite("Downloads end to end, against the reference server")
struct DownloadTests {
    func setUp(_ files: [String: [UInt8]], serverArguments: [String] = []) throws -> (ReferenceServer, AgentHarness) {
        let server = try ReferenceServer(arguments: serverArguments)
        for (name, bytes) in files {
            let path = server.tree() + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        }
        let session = try AgentHarness()
        try session.writeConfig("[agent]\nautostart = false\n[transfers]\nstall_seconds = 3\n")
        try session.addAccount(server)
        return (server, session)
    }

    func waitForPart(_ session: AgentHarness, atLeast bytes: Int, name: String) throws {
        let deadline = Date().addingTimeInterval(30)
        while true {
            let size = (try? FileManager.default.attributesOfItem(atPath: session.downloads + "/" + name + ".part")[.size] as? Int) ?? 0
            if size >= bytes { return }
            if Date() >= deadline { break }
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
        try session.killAgent(at: "download-in-place")
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
        _ = FileManager.default.createFile(atPath: placed, contents: Data(theirs))

        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: placed)) == Data(theirs), "the person's file is untouched")
        let item = try #require(try session.items().first)
        let ours = try #require(item["local_path"] as? String)
        #expect(ours != placed, "the row does not claim the person's file")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ours)) == Data(content))
        #expect(!FileManager.default.fileExists(atPath: placed + ".part"))
    }

    @Test("killed in the same window, then the file in place edited where it is (its .part is the same file): the edit is kept, ours goes beside it")
    func editedInPlaceInsideTheWindow() throws {
        let content = TestData.bytes(count: 3_000_000, seed: 6)
        let (server, session) = try setUp(["Docs/report.pdf": content])
        defer { withExtendedLifetime(server) {} }
        try killInsideTheMoveWindow(session, downloading: "/Docs/report.pdf")
        // An editor that writes in place: the same inode, which the .part still names.
        let placed = session.downloads + "/report.pdf"
        let edit = Array("the person's notes".utf8)
        let handle = try #require(FileHandle(forWritingAtPath: placed))
        handle.seekToEndOfFile()
        handle.write(Data(edit))
        try handle.close()

        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: placed)) == Data(content + edit), "the person's edit is kept")
        let item = try #require(try session.items().first)
        let ours = try #require(item["local_path"] as? String)
        #expect(ours != placed, "the row does not claim the edited file")
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
        _ = FileManager.default.createFile(atPath: server.tree() + "/Docs/data.bin", contents: Data(fresh))
        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        let got = try Data(contentsOf: URL(fileURLWithPath: session.downloads + "/data.bin"))
        #expect(got == Data(fresh))
    }

    @Test("a resume answered with the whole file (200) that breaks off half way, then honoured: the file is byte-identical",
          arguments: ["checksums", "no checksums"])
    func wholeFileAnswerToAResume(server kind: String) async throws {
        try await offThePool {
            let content = TestData.bytes(count: 8_000_000, seed: 8)
            // Without checksums from the server nothing but the download itself keeps the bytes apart.
            let (server, session) = try setUp(["Films/film.mkv": content], serverArguments: kind == "checksums" ? [] : ["--no-checksums"])
            // The line drops after 3 MB; the resume is answered 200 (the Range ignored), and that
            // drops after 1.5 MB; then the server honours Range again.
            try server.control("POST", "faults", json: [
                ["method": "GET", "path_prefix": "/dav/", "reset_after_bytes": 3_000_000],
                ["method": "GET", "path_prefix": "/dav/", "ignore_range": true, "reset_after_bytes": 1_500_000],
            ])
            let queued = try session.cli(["download", "/Films/film.mkv"])
            try #require(queued.status == 0, "\(queued.stderr)")
            try session.startAgent()
            try session.waitForAll("completed", count: 1)
            #expect(try TestData.sha256(ofFile: session.downloads + "/film.mkv") == (try TestData.sha256(ofFile: server.tree() + "/Films/film.mkv")))
            let item = try #require(try session.items().first)
            #expect(item["sha256"] as? String == (try TestData.sha256(ofFile: server.tree() + "/Films/film.mkv")), "the row's hash is the file's")
            let gets = ((try server.stats()["requests"] as? [String: Any])?["GET"] as? Int) ?? 0
            #expect(gets == 3, "a break, a whole file broken off, then the rest: \(gets) GETs")
            #expect(!FileManager.default.fileExists(atPath: session.downloads + "/film.mkv.part"))
        }
    }

    @Test("a download whose bytes the disk does not take (fsync fails) fails as local_write, and nothing looks complete")
    func fsyncFails() async throws {
        try await offThePool {
            let content = TestData.bytes(count: 12_000_000, seed: 9)
            let (server, session) = try setUp(["Films/big.mov": content])
            defer { withExtendedLifetime(server) {} }
            // Local Drive claims 64 MB; the disk under it holds 4.
            let disk = try OvercommittedDisk(at: session.downloads, claimedMegabytes: 64, heldMegabytes: 4)
            defer { session.killAgent(); disk.unmount() }
            #expect(try session.cli(["download", "/Films/big.mov"]).status == 0)
            try session.startAgent()
            try session.waitFor("the download failed", timeout: 60) { items in
                items.first.map { $0["state"] as? String == "failed" || $0["state"] as? String == "completed" } ?? false
            }
            let item = try #require(try session.items().first)
            let reason = item["reason"] as? [String: Any]
            #expect(item["state"] as? String == "failed")
            #expect(reason?["code"] as? String == "local_write", "\(item)")
            #expect((reason?["message"] as? String)?.contains("fsync") == true, "the disk refused the bytes at fsync: \(item)")
            #expect(!FileManager.default.fileExists(atPath: session.downloads + "/big.mov"), "nothing complete-looking on the disk")
            #expect(!FileManager.default.fileExists(atPath: session.downloads + "/big.mov.part"), "no bytes kept that a retry could trust")
        }
    }

    @Test("to a FAT stick (no hard links) a download goes into place without replacing: a file there before, or one saved there meanwhile, is kept, and ours takes name (1).ext; also when it stalled and resumed from its .part",
          arguments: [false, true])
    func fatStick(resumed: Bool) async throws {
        try await offThePool {
            let report = TestData.bytes(count: 3_000_000, seed: 10)
            let (server, session) = try setUp(["Docs/report.pdf": report, "Docs/notes.txt": Array("from the server".utf8)])
            let disk = try VFATDisk(at: session.downloads)
            defer { session.killAgent(); disk.unmount() }
            let probe = session.downloads + "/probe"
            _ = FileManager.default.createFile(atPath: probe, contents: Data())
            try #require(link(probe, probe + "-linked") != 0 && errno == EPERM, "the stick has hard links after all: the test proves nothing")
            try FileManager.default.removeItem(atPath: probe)
            _ = FileManager.default.createFile(atPath: session.downloads + "/notes.txt", contents: Data("mine".utf8))
            try server.fault(["method": "GET", "path_prefix": "/dav/alice/Docs/report.pdf", "stall_seconds": 60, "after_bytes": 1_000_000])
            let queued = try session.cli(["download", "/Docs/notes.txt", "/Docs/report.pdf"])
            try #require(queued.status == 0, "\(queued.stderr)")
            try session.startAgent()
            try waitForPart(session, atLeast: 1_000_000, name: "report.pdf")
            // The person saves a report.pdf of their own there while ours is on its way.
            _ = FileManager.default.createFile(atPath: session.downloads + "/report.pdf", contents: Data("my report".utf8))
            if resumed {
                // Longer than the agent waits for a silent server (3 s): the download goes
                // again from what its .part holds.
                try session.waitForAgentLog("report.pdf: the server did not answer for 3 s")
            }
            try server.clearFaults()
            try session.waitForAll("completed", count: 2)

            let names = try FileManager.default.contentsOfDirectory(atPath: session.downloads).sorted()
            #expect(names == ["notes (1).txt", "notes.txt", "report (1).pdf", "report.pdf"], "\(names)")
            #expect(try String(contentsOfFile: session.downloads + "/notes.txt", encoding: .utf8) == "mine")
            #expect(try String(contentsOfFile: session.downloads + "/report.pdf", encoding: .utf8) == "my report")
            #expect(try String(contentsOfFile: session.downloads + "/notes (1).txt", encoding: .utf8) == "from the server")
            #expect(try TestData.sha256(ofFile: session.downloads + "/report (1).pdf") == (try TestData.sha256(ofFile: server.tree() + "/Docs/report.pdf")))
            let paths = try session.items().compactMap { $0["local_path"] as? String }.sorted()
            #expect(paths == [session.downloads + "/notes (1).txt", session.downloads + "/report (1).pdf"], "the rows name the files they made")
        }
    }

    @Test("a file saved under the name while ours downloaded, then the agent killed once ours is in place as name (1).ext: the restart completes it, and no .part is left")
    func nameTakenThenKilledInPlace() throws {
        let content = TestData.bytes(count: 3_000_000, seed: 12)
        let (server, session) = try setUp(["Docs/report.pdf": content])
        defer { session.killAgent() }
        try server.fault(["method": "GET", "path_prefix": "/dav/alice/Docs/report.pdf", "stall_seconds": 60, "after_bytes": 1_000_000])
        try #require(try session.cli(["download", "/Docs/report.pdf"]).status == 0)
        try session.killAgent(at: "download-in-place") {
            try waitForPart(session, atLeast: 1_000_000, name: "report.pdf")
            _ = FileManager.default.createFile(atPath: session.downloads + "/report.pdf", contents: Data("my report".utf8))
            try server.clearFaults()
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: session.downloads).sorted()
        #expect(left == ["report (1).pdf", "report (1).pdf.part", "report.pdf"], "the .part goes with the name: \(left)")

        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: session.downloads).sorted() == ["report (1).pdf", "report.pdf"], "no .part left")
        #expect(try String(contentsOfFile: session.downloads + "/report.pdf", encoding: .utf8) == "my report")
        #expect(try Data(contentsOf: URL(fileURLWithPath: session.downloads + "/report (1).pdf")) == Data(content))
    }

    @Test("queue and status show a running download's progress as it goes")
    func liveProgress() async throws {
        try await offThePool {
            // About a megabyte a second, for as long as the test looks: 20 s of it, so that
            // even a slow build (the thread sanitizer's) looks twice before the end.
            let content = TestData.bytes(count: 20_000_000, seed: 11)
            let (server, session) = try setUp(["Films/clip.mp4": content])
            try server.fault(["method": "GET", "path_prefix": "/dav/", "bytes_per_second": 1_000_000])
            #expect(try session.cli(["download", "/Films/clip.mp4"]).status == 0)
            try session.startAgent()
            func running() throws -> Int {
                let item = try session.items().first { $0["state"] as? String == "in_progress" }
                return item?["bytes_done"] as? Int ?? 0
            }
            var first = 0
            try Poll.until("the queue to show the download under way", seconds: 30) {
                first = try running()
                return first > 0
            }
            try Poll.until("the queue to show it further on", seconds: 30) { try running() > first }
            let status = try session.cli(["status", "--json"])
            let batch = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["batch"] as? [String: Any]
            #expect((batch?["bytes_done"] as? Int ?? 0) > 0, "status sees the bytes too: \(status.stdout)")
            try server.clearFaults()
            try session.waitForAll("completed", count: 1)
            #expect(try TestData.sha256(ofFile: session.downloads + "/clip.mp4") == (try TestData.sha256(ofFile: server.tree() + "/Films/clip.mp4")))
        }
    }

    @Test("a name already taken here becomes name (1).ext and the first file is untouched")
    func numberedSuffix() throws {
        let (server, session) = try setUp(["Docs/report.pdf": Array("from the server".utf8)])
        defer { withExtendedLifetime(server) {} }
        try FileManager.default.createDirectory(atPath: session.downloads, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: session.downloads + "/report.pdf", contents: Data("mine".utf8))
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
