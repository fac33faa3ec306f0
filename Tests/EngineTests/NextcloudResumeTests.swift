import Foundation
import Glibc
import Queue
import TestSupport
import Testing

/// One file going to a Nextcloud by chunked upload v2 while things go wrong: an agent
/// killed again and again, an upload folder that expires on the server.
struct NextcloudScene: Sendable {
    let server: ReferenceServer
    let session: AgentHarness
    let file: String
    let size: Int
    let remote = "Big Uploads/video #1.mov"

    /// Chunks of 5 MiB that stay 5 MiB (each is held up for a second by the server, so a
    /// chunk never takes less than that), a stall limit the server's pauses never reach.
    init(size: Int, agentStallSeconds: Int = 30) throws {
        server = try ReferenceServer(face: .nextcloud)
        session = try AgentHarness()
        try session.writeConfig("[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 5\nchunk_seconds = 1\nstall_seconds = \(agentStallSeconds)\n")
        try session.addAccount(address: server.address())
        self.size = size
        file = try session.home.randomFile("videos/video #1.mov", size: size, seed: 77)
        let r = try session.cli(["upload", "--to", "/Big Uploads", file])
        guard r.status == 0 else { throw TestFailure("upload failed (\(r.status)): \(r.stderr)") }
    }

    /// Every chunk PUT: the server reads 1 MiB, then nothing for a second, then the rest.
    func slowEveryChunk() throws {
        try server.fault(["method": "PUT", "path_prefix": "/remote.php/dav/uploads/", "stall_seconds": 1,
                          "after_bytes": 1 << 20, "count": 10_000])
    }

    func stat(_ key: String) throws -> Int { try server.stats()[key] as? Int ?? -1 }

    /// The one row, read straight from the queue (a poll costs a millisecond).
    func row(_ store: QueueStore) throws -> Transfer {
        guard let row = try store.transfers().first else { throw TestFailure("the queue is empty") }
        return row
    }

    /// Waits until the row's checkpoint has reached `offset` bytes.
    func waitForCheckpoint(_ store: QueueStore, atLeast offset: Int64, timeout: Double = 60) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try row(store).checkpoint.offset < offset {
            guard Date() < deadline else { throw TestFailure("no progress: \(session.agentLog.suffix(2000))") }
            usleep(20_000)
        }
    }

    /// The file is there, identical, assembled once; `moves` MOVEs were asked for in all.
    func expectArrivedOnce(moves: Int = 1) throws {
        #expect(try TestData.sha256(ofFile: server.tree() + "/" + remote) == (try TestData.sha256(ofFile: file)))
        let stats = try server.stats()
        #expect(stats["moves"] as? Int == moves, "MOVEs: \(stats["moves"] ?? "-")")
        #expect(stats["assemblies"] as? [String: Int] == [remote: 1])
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Big Uploads") == ["video #1.mov"])
    }
}

@Suite("Nextcloud chunked upload v2 under fire")
struct NextcloudResumeTests {
    @Test("the agent SIGKILLed 3 times during a slowed large upload: it completes identical, the server received at most the file plus one chunk per kill, and exactly one MOVE happened")
    func killedAgain() async throws {
        try await offThePool {
            let scene = try NextcloudScene(size: (40 << 20) + 12_345)
            try scene.slowEveryChunk()
            let kills = 3
            var rng = SystemRandomNumberGenerator()
            var sent = try scene.stat("chunk_bytes")
            let store = try QueueStore(path: scene.session.databasePath)
            for kill in 1...kills {
                try scene.session.startAgent()
                // Once a chunk is confirmed, so that the server holds some of the file for the
                // last run to go on from: a slowed chunk takes longer than the random wait below.
                if kill == 1 { try scene.waitForCheckpoint(store, atLeast: 1) }
                // Killed while sending: once the server has more of the file than before this
                // run (however long the agent took to start), at a random moment after that.
                let deadline = Date().addingTimeInterval(60)
                while try scene.stat("chunk_bytes") <= sent {
                    guard Date() < deadline else { throw TestFailure("run \(kill) sent nothing within 60 s: \(scene.session.agentLog.suffix(2000))") }
                    usleep(50_000)
                }
                usleep(UInt32.random(in: 0...1_000_000, using: &rng))
                scene.session.killAgent()
                sent = try scene.stat("chunk_bytes")
                // Most of the file on the server already (a slow build, a loaded machine): a
                // further kill could come after its last byte, and the last run would have
                // nothing to resume. It goes on from here.
                if sent >= scene.size - (12 << 20) { break }
            }
            let beforeLast = try scene.stat("chunk_bytes")
            #expect(beforeLast > 0 && beforeLast < scene.size, "killed while it was being sent (\(beforeLast) bytes so far)")
            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 120)
            try scene.expectArrivedOnce()
            let received = try scene.stat("chunk_bytes")
            #expect(received <= scene.size + kills * (5 << 20), "the server read \(received) bytes for a \(scene.size)-byte file")
            // The last run went on from the chunks the server held; none started over.
            let row = try scene.row(store)
            #expect(row.counters.resumedAt > 0, "the last run resumed at \(row.counters.resumedAt)")
            #expect(!scene.session.agentLog.contains("no longer has the partial upload"))
        }
    }

    @Test("the upload folder expiring mid-way: the next chunk finds it gone, the agent asks, starts over with upload_lost, and the file arrives once")
    func folderExpires() async throws {
        try await offThePool {
            let scene = try NextcloudScene(size: (30 << 20) + 99)
            try scene.slowEveryChunk()
            let store = try QueueStore(path: scene.session.databasePath)
            try scene.session.startAgent()
            try scene.waitForCheckpoint(store, atLeast: 10 << 20)
            try scene.server.expireUploads()
            let sentBefore = try scene.stat("chunk_bytes")
            var notes: [String] = []
            let deadline = Date().addingTimeInterval(60)
            while try scene.row(store).state != .completed {
                guard Date() < deadline else { throw TestFailure("not completed; notes \(notes): \(scene.session.agentLog.suffix(3000))") }
                if let code = try scene.row(store).reason?.code.rawValue, notes.last != code { notes.append(code) }
                usleep(20_000)
            }
            // The row says so while it waits to start over, for as long as the retry's wait:
            // a loaded machine's look can miss that, but never sees another note.
            #expect(notes.allSatisfy { $0 == "upload_lost" }, "no other note: \(notes)")
            #expect(scene.session.agentLog.contains("no longer has the partial upload (not found)"))
            #expect(scene.session.agentLog.contains("started again (restart 1)"), "the agent said it started over")
            // Started over: the whole file went up after the expiry, beside what went before.
            let sent = try scene.stat("chunk_bytes")
            #expect(sent >= sentBefore + scene.size, "\(sent) bytes sent in all, \(sentBefore) of them before the expiry")
            try scene.expectArrivedOnce()
        }
    }

    @Test("the target folder removed while chunks go up: MOVE finds no folder (409), the agent makes it again, and the file arrives once")
    func folderRemovedBeforeMove() async throws {
        try await offThePool {
            let scene = try NextcloudScene(size: (12 << 20) + 1)
            try scene.slowEveryChunk()
            let store = try QueueStore(path: scene.session.databasePath)
            try scene.session.startAgent()
            try scene.waitForCheckpoint(store, atLeast: 5 << 20)
            try FileManager.default.removeItem(atPath: scene.server.tree() + "/Big Uploads")
            try scene.session.waitForAll("completed", count: 1, timeout: 60)
            try scene.expectArrivedOnce(moves: 2) // the one refused with 409, and the one that made the file
            #expect(scene.session.agentLog.contains("made /Big Uploads again"))
        }
    }

    @Test("cancel during a chunked upload deletes its upload folder on the server")
    func cancelDeletesTheFolder() async throws {
        try await offThePool {
            let scene = try NextcloudScene(size: (20 << 20) + 1)
            try scene.slowEveryChunk()
            let store = try QueueStore(path: scene.session.databasePath)
            try scene.session.startAgent()
            try scene.waitForCheckpoint(store, atLeast: 5 << 20)
            let handle = try #require(try scene.row(store).uploadURL)
            let uploads = scene.server.data.path + "/uploads/alice/" + handle
            #expect(FileManager.default.fileExists(atPath: uploads), "the upload folder is there while it goes")
            let id = try scene.row(store).id
            #expect(try scene.session.cli(["cancel", String(id)]).status == 0)
            let deadline = Date().addingTimeInterval(60)
            while try FileManager.default.fileExists(atPath: uploads) || !store.transfers().isEmpty {
                guard Date() < deadline else { throw TestFailure("still there: \(scene.session.agentLog.suffix(2000))") }
                usleep(50_000)
            }
            #expect(!FileManager.default.fileExists(atPath: scene.server.tree() + "/" + scene.remote))
        }
    }
}
