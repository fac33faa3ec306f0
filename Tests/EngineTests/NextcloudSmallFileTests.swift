import Foundation
import Glibc
import Queue
import TestSupport
import Testing
import Transport
@testable import Engine

/// A small file to a Nextcloud goes as one PUT to its final name, as Nextcloud's desktop
/// client sends it, instead of a chunked upload's three requests (MKCOL of an upload folder,
/// the chunk, `MOVE .file`). The PUT is conditional (`If-None-Match: *`), and Nextcloud
/// writes its body to a part file renamed into place when whole.
@Suite("Nextcloud: a small file is one PUT")
struct NextcloudSmallFileTests {
    static let limit = Int(UploadJob.onePutLimit)

    /// A reference server with Nextcloud's face, and a home with an account on it; no agent yet.
    func scene() throws -> (ReferenceServer, AgentHarness) {
        let server = try ReferenceServer(face: .nextcloud)
        let s = try AgentHarness()
        try s.writeConfig("[agent]\nautostart = false\n")
        try s.addAccount(address: server.address())
        return (server, s)
    }

    @Test("a batch of small files: each arrives intact with its mtime and checksum, by one PUT and no upload folder; one at the limit too, and one byte over it goes chunked")
    func batchOfSmallFiles() async throws {
        try await offThePool {
            let (server, s) = try scene()
            let small = 20
            var files: [String] = []
            for i in 0..<small {
                let path = try s.home.randomFile("Trip/IMG_\(i).jpg", size: 30_000 + i * 1_000, seed: UInt64(300 + i))
                var times = [timespec(tv_sec: 1_600_000_000 + i, tv_nsec: 0), timespec(tv_sec: 1_600_000_000 + i, tv_nsec: 0)]
                #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
                files.append(path)
            }
            files.append(try s.home.randomFile("Trip/at the limit.mov", size: Self.limit, seed: 400))
            files.append(try s.home.randomFile("Trip/over the limit.mov", size: Self.limit + 1, seed: 401))
            #expect(try s.cli(["upload", "--to", "/Photos", s.home.path + "/Trip"]).status == 0)
            try server.control("POST", "stats/reset")
            try s.startAgent()
            try s.waitForAll("completed", count: files.count, timeout: 120)
            // What the agent sent, before this test looks at the files itself.
            let stats = try server.stats()

            let account = try server.nextcloudAccount()
            let dav = WebDAVClient(root: account.webdavURL, credentials: Credentials(username: "alice", password: "wonderland"))
            for (i, file) in files.enumerated() {
                let name = String(file.split(separator: "/").last!)
                let sha = try TestData.sha256(ofFile: file)
                #expect(try TestData.sha256(ofFile: server.tree() + "/Photos/Trip/" + name) == sha, "\(name)")
                #expect(try dav.properties(of: "/Photos/Trip/" + name).checksum == "SHA256:" + sha, "\(name): OC-Checksum stored")
                if i < small {
                    var st = stat()
                    #expect(stat(server.tree() + "/Photos/Trip/" + name, &st) == 0 && st.st_mtim.tv_sec == 1_600_000_000 + i,
                            "\(name): the local mtime, by X-OC-Mtime")
                }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Photos/Trip").count == files.count)
            // A file made by its one PUT has no checkpoint after it: its completion says what
            // was read and hashed, each byte once.
            let store = try QueueStore(path: s.databasePath)
            for id in 1...Int64(small) {
                let row = try #require(try store.transfer(id: id))
                #expect(row.counters == ResumeCounters(resumedAt: 0, bytesRead: row.bytesTotal, bytesHashed: row.bytesTotal),
                        "\(row.name): \(row.counters)")
            }
            // The file at the limit is not held in memory: read once for its checksum, again as
            // it is sent (and sealed with that checksum), hashed for the row once.
            let atTheLimit = try #require(try (1...Int64(files.count)).compactMap { try store.transfer(id: $0) }.first { $0.name == "at the limit.mov" })
            #expect(atTheLimit.counters == ResumeCounters(resumedAt: 0, bytesRead: 2 * atTheLimit.bytesTotal, bytesHashed: atTheLimit.bytesTotal),
                    "\(atTheLimit.counters)")

            let requests = stats["requests"] as? [String: Int] ?? [:]
            let puts = stats["puts"] as? [String: Int] ?? [:]
            let onePut = files.dropLast().map { "Photos/Trip/" + $0.split(separator: "/").last! }
            // Each file at or under the limit: one PUT to its final name, nothing else.
            #expect(puts.filter { !$0.key.hasPrefix("uploads/") } == Dictionary(uniqueKeysWithValues: onePut.map { ($0, 1) }), "\(puts)")
            // The file over it: one upload folder, its one chunk (16 MiB chunks), one MOVE.
            #expect(stats["chunk_puts"] as? Int == 1 && stats["moves"] as? Int == 1, "\(stats)")
            #expect(stats["assemblies"] as? [String: Int] == ["Photos/Trip/over the limit.mov": 1], "\(stats)")
            // Two MKCOLs make /Photos/Trip for the batch, once; the third is the large file's upload folder.
            #expect(requests["MKCOL"] == 3 && requests["PUT"] == files.count && requests["MOVE"] == 1, "\(requests)")
            // The folder's listing, at most twice (if the batch outlived its lifetime); no
            // look at a file before or after it is made (nothing here relies on it).
            #expect((requests["PROPFIND"] ?? 0) <= 2, "\(requests)")
            // Per small file one request, where the chunked upload took three; the large
            // file's three and the folder's few on top.
            let total = requests.values.reduce(0, +)
            #expect(total <= small + 1 + 3 + 4, "\(total) requests for \(files.count) files: \(requests)")
        }
    }

    @Test("two queued files headed for one name, sent at once: the older keeps it, the newer moves aside before its PUT, so no PUT is refused")
    func twoRowsOneName() async throws {
        try await offThePool {
            _ = try twoFilesForOneName { s in
                try s.startAgent()
            }
        }
    }

    @Test("two queued files headed for one name, the older made while the newer had found it free and not yet sent: the newer moves aside before its PUT, so no PUT is refused")
    func olderMadeAfterTheNewerLooked() async throws {
        try await offThePool {
            let s = try twoFilesForOneName { s in
                // Both held once they found the name free; the older let go first, the newer
                // once the older is completed.
                s.pause(at: "upload-target-checked")
                try s.startAgent()
                try s.waitForAgentLog("transfer 1: paused at upload-target-checked")
                try s.waitForAgentLog("transfer 2: paused at upload-target-checked")
                s.releasePause(transfer: 1)
                try s.waitFor("the older completed") { $0.contains { $0["id"] as? Int == 1 && $0["state"] as? String == "completed" } }
                s.releasePause()
            }
            #expect(s.agentLog.contains("upload 2: another upload in the queue is headed for /Same/photo.jpg; this one goes as /Same/photo (1).jpg"),
                    "\(s.agentLog.suffix(2000))")
        }
    }

    /// Two files named photo.jpg queued for /Same, sent as `send` lets the agent: the older
    /// keeps the name, and each is sent by one PUT. The names are settled in the queue, where
    /// each record of a file made claims its name: a PUT the server refused (412) would count
    /// twice here.
    @discardableResult
    func twoFilesForOneName(_ send: (AgentHarness) throws -> Void) throws -> AgentHarness {
        let (server, s) = try scene()
        let a = try s.home.randomFile("a/photo.jpg", size: 30_000, seed: 11)
        let b = try s.home.randomFile("b/photo.jpg", size: 30_000, seed: 12)
        #expect(try s.cli(["upload", "--to", "/Same", a, b]).status == 0)
        try server.control("POST", "stats/reset")
        try send(s)
        try s.waitForAll("completed", count: 2, timeout: 60)
        #expect(try TestData.sha256(ofFile: server.tree() + "/Same/photo.jpg") == (try TestData.sha256(ofFile: a)), "the older keeps the name")
        #expect(try TestData.sha256(ofFile: server.tree() + "/Same/photo (1).jpg") == (try TestData.sha256(ofFile: b)))
        let puts = try server.stats()["puts"] as? [String: Int] ?? [:]
        #expect(puts == ["Same/photo.jpg": 1, "Same/photo (1).jpg": 1], "no PUT refused: \(puts)")
        return s
    }

    @Test("two empty files headed for one name, sent at once: both complete, one under each name or the second found there already")
    func twoEmptyRowsOneName() async throws {
        try await offThePool {
            let (server, s) = try scene()
            let a = try s.home.file("a/empty.txt", bytes: [])
            let b = try s.home.file("b/empty.txt", bytes: [])
            #expect(try s.cli(["upload", "--to", "/Same", a, b]).status == 0)
            try s.startAgent()
            try s.waitForAll("completed", count: 2, timeout: 60)
            let names = try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Same").sorted()
            #expect(names == ["empty (1).txt", "empty.txt"] || names == ["empty.txt"], "\(names)")
        }
    }

    @Test("a different file saved at the name just before the PUT: the server refuses it (412), theirs survives, ours completes as name (1).ext")
    func differentFileSavedBeforeThePut() async throws {
        try await offThePool {
            // As `SecondWriterTests.differentFileSavedMeanwhile`, whose Nextcloud file is large
            // enough to go chunked: here the 3 MiB file goes as one PUT, held by the proxy
            // until the other file is there. The PUT found it taken before its body was
            // kept, so the body goes again under the next free name.
            let scene = try SecondWriterScene(.nextcloud, hold: .atMethod("PUT"))
            try scene.session.startAgent()
            try scene.proxy.waitUntilHolding()
            let theirs = try scene.saveTheirs()
            scene.proxy.release()
            try scene.session.waitForAll("completed", count: 1, timeout: 120)

            let name = SecondWriterTests.name
            #expect(try TestData.sha256(ofFile: scene.onServer(name)) == theirs, "the file saved meanwhile is untouched")
            #expect(try TestData.sha256(ofFile: scene.onServer("IMG_0001 (1).jpg")) == (try TestData.sha256(ofFile: scene.file)))
            #expect(try scene.listing() == ["IMG_0001 (1).jpg", name], "nothing else: no part file, no third copy")
            let row = try #require(try scene.session.items().first)
            #expect(row["target"] as? String == "/\(SecondWriterTests.folder)/IMG_0001 (1).jpg", "the row names where it went: \(row)")
            #expect(scene.session.agentLog.contains("someone saved another file as /Shared/IMG_0001.jpg before this one was sent; it is sent as /Shared/IMG_0001 (1).jpg"),
                    "\(scene.session.agentLog.suffix(2000))")
            // The kept body whole, and as much of the refused one as went before the refusal
            // came back (libcurl stops sending a body once the server has answered).
            let sent = try scene.proxy.bytesSent()
            #expect(sent >= scene.size && sent < 2 * scene.size + scene.size / 2, "the refused body and the one kept: \(sent) bytes")
            let stats = try #require(try scene.running.reference?.stats())
            let puts = stats["puts"] as? [String: Int] ?? [:]
            #expect(puts == ["Shared/IMG_0001.jpg": 2, "Shared/IMG_0001 (1).jpg": 1], "theirs, ours refused, ours: \(puts)")
            #expect(stats["moves"] as? Int == 0 && stats["chunk_puts"] as? Int == 0, "\(stats)")
        }
    }

    @Test("killed inside the PUT that makes the file: the restarted agent finds its file there by its checksum and completes, nothing sent again")
    func killedInsideThePut() async throws {
        try await offThePool {
            let scene = try SecondWriterScene(.nextcloud, hold: nil)
            try scene.session.killAgent(at: "upload-made")
            let sha = try TestData.sha256(ofFile: scene.file)
            let row = try #require(try QueueStore(path: scene.session.databasePath).transfer(id: 1))
            #expect(row.state == .inProgress && row.finishing && row.sha256 == sha,
                    "the row recorded what it was making, with its digest: \(row.state) \(row.finishing) \(row.sha256 ?? "-")")
            let before = try scene.proxy.bytesSent()

            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 60)
            #expect(try scene.listing() == [SecondWriterTests.name], "one file, no (1)")
            #expect(try TestData.sha256(ofFile: scene.onServer(SecondWriterTests.name)) == sha)
            #expect(try scene.proxy.bytesSent() - before < 64 << 10, "no body sent again")
            #expect(scene.session.agentLog.contains("is this upload's file, made before the agent stopped"), "\(scene.session.agentLog.suffix(2000))")
            let stats = try #require(try scene.running.reference?.stats())
            #expect((stats["puts"] as? [String: Int])?["\(SecondWriterTests.folder)/\(SecondWriterTests.name)"] == 1, "made once: \(stats)")
        }
    }

    @Test("a power cut takes back the record made just before the PUT (it is not flushed to the disk for a new file on Nextcloud): the restarted agent finds the file it sent at its name, no (1), nothing sent again")
    func recordLostInAPowerCut() async throws {
        try await offThePool {
            let scene = try SecondWriterScene(.nextcloud, hold: nil)
            try scene.session.killAgent(at: "upload-made")
            // What a power cut may leave of commits that were never flushed: the row as it was
            // before the record of the file being made.
            let store = try QueueStore(path: scene.session.databasePath)
            try store.database.run("UPDATE transfers SET finishing = 0, sha256 = NULL WHERE id = 1")
            let before = try scene.proxy.bytesSent()

            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 60)
            #expect(try scene.listing() == [SecondWriterTests.name], "one file, no (1)")
            #expect(try TestData.sha256(ofFile: scene.onServer(SecondWriterTests.name)) == (try TestData.sha256(ofFile: scene.file)))
            #expect(try scene.proxy.bytesSent() - before < 64 << 10, "no body sent again")
            #expect(!scene.session.agentLog.contains("(1)"), "\(scene.session.agentLog.suffix(2000))")
            let stats = try #require(try scene.running.reference?.stats())
            #expect((stats["puts"] as? [String: Int])?["\(SecondWriterTests.folder)/\(SecondWriterTests.name)"] == 1, "made once: \(stats)")
        }
    }

    @Test("a power cut takes back the records of the free name a 412 moved ours to and of the PUT that made it there: the restarted agent finds its file at name (1) by its checksum, no (2), nothing sent again")
    func movedAsideRecordLostInAPowerCut() async throws {
        try await offThePool {
            let scene = try SecondWriterScene(.nextcloud, hold: .atMethod("PUT"))
            var theirs = ""
            try scene.session.killAgent(at: "upload-made") {
                try scene.proxy.waitUntilHolding()
                theirs = try scene.saveTheirs()
                scene.proxy.release()
            }
            let name = SecondWriterTests.name, aside = "IMG_0001 (1).jpg"
            #expect(try scene.listing() == [aside, name], "ours was made beside theirs before the kill")
            // Neither commit was flushed: the row as it was before the 412.
            let store = try QueueStore(path: scene.session.databasePath)
            try store.database.run("UPDATE transfers SET finishing = 0, sha256 = NULL, remote_path = ? WHERE id = 1",
                                   [.text("/\(SecondWriterTests.folder)/\(name)")])
            let before = try scene.proxy.bytesSent()

            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 60)
            #expect(try scene.listing() == [aside, name], "no (2)")
            #expect(try TestData.sha256(ofFile: scene.onServer(name)) == theirs, "theirs untouched")
            #expect(try TestData.sha256(ofFile: scene.onServer(aside)) == (try TestData.sha256(ofFile: scene.file)))
            #expect(try scene.proxy.bytesSent() - before < 64 << 10, "no body sent again")
            let row = try #require(try scene.session.items().first)
            #expect(row["target"] as? String == "/\(SecondWriterTests.folder)/\(aside)", "the row names where it is: \(row)")
            let stats = try #require(try scene.running.reference?.stats())
            #expect((stats["puts"] as? [String: Int])?["\(SecondWriterTests.folder)/\(aside)"] == 1, "made once: \(stats)")
        }
    }

    @Test("a file over 1 MiB, hashed for its checksum, then rewritten in place before its PUT: the PUT is broken off before its end, nothing is made of it, and the retry sends what the file holds now, under its own checksum")
    func rewrittenBetweenChecksumAndPut() async throws {
        try await offThePool {
            let (server, s) = try scene()
            let size = 3 << 20
            let file = try s.home.randomFile("clip.mov", size: size, seed: 6)
            try server.makeFolder("Clips")
            s.pause(at: "upload-finishing")
            #expect(try s.cli(["upload", "--to", "/Clips", file]).status == 0)
            try s.startAgent()
            try s.waitForAgentLog("paused at upload-finishing")
            let hashed = try #require(try QueueStore(path: s.databasePath).transfer(id: 1)?.sha256)
            #expect(hashed == (try TestData.sha256(ofFile: file)), "the checksum made of the file as it was")
            // Another program writes into the file, same size, keeping its times: nothing a
            // look at the file's size or times could tell before the PUT.
            var st = stat()
            #expect(stat(file, &st) == 0)
            let edit = open(file, O_WRONLY | O_CLOEXEC)
            #expect(edit >= 0 && pwrite(edit, Array(repeating: UInt8(0x42), count: 4096), 4096, 1 << 20) == 4096)
            close(edit)
            var times = [st.st_atim, st.st_mtim]
            #expect(utimensat(AT_FDCWD, file, &times, 0) == 0)
            let now = try TestData.sha256(ofFile: file)
            s.releasePause()

            try s.waitForAll("completed", count: 1, timeout: 90)
            #expect(try TestData.sha256(ofFile: server.tree() + "/Clips/clip.mov") == now)
            let account = try server.nextcloudAccount()
            let dav = WebDAVClient(root: account.webdavURL, credentials: Credentials(username: "alice", password: "wonderland"))
            #expect(try dav.properties(of: "/Clips/clip.mov").checksum == "SHA256:" + now, "the checksum kept is the file's")
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Clips") == ["clip.mov"])
            let row = try #require(try s.items().first)
            #expect(row["sha256"] as? String == now, "\(row)")
            let stats = try server.stats()
            #expect((stats["puts"] as? [String: Int])?["Clips/clip.mov"] == 2, "the first broken off before its end, the second whole: \(stats)")
            #expect(s.agentLog.contains("clip.mov: changed while uploading, started again"), "\(s.agentLog.suffix(2000))")
        }
    }

    @Test("a connection reset mid-PUT: no part of the file appears under its name, and the retry sends it whole, saying why it starts again")
    func resetMidPut() async throws {
        try await offThePool {
            let (server, s) = try scene()
            let size = 3 << 20
            let file = try s.home.randomFile("clip.mov", size: size, seed: 5)
            try server.makeFolder("Clips")
            // The first PUT: the connection drops after 1 MiB of its body. The second is held
            // before its first byte until the test has looked, however slow the machine.
            try server.fault(["method": "PUT", "path_prefix": "/remote.php/dav/files/", "reset_after_bytes": 1 << 20])
            try server.fault(["method": "PUT", "path_prefix": "/remote.php/dav/files/", "stall_seconds": 120])
            #expect(try s.cli(["upload", "--to", "/Clips", file]).status == 0)
            try s.startAgent()
            func puts() throws -> Int { ((try server.stats()["requests"] as? [String: Any])?["PUT"] as? Int) ?? 0 }
            try Poll.until("the second PUT, held", seconds: 60) { try puts() >= 2 }
            let listed = try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Clips")
            #expect(listed.isEmpty, "nothing under the name (nor beside it) after a broken PUT: \(listed)")
            // The retry's reason, as the row held it while it waited (the log says what it said).
            #expect(s.agentLog.contains("a file this small goes in one request, so it is sent again from the start"), "\(s.agentLog.suffix(2000))")
            try server.clearFaults()
            try s.waitForAll("completed", count: 1, timeout: 60)
            #expect(try TestData.sha256(ofFile: server.tree() + "/Clips/clip.mov") == (try TestData.sha256(ofFile: file)))
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Clips") == ["clip.mov"])
            let stats = try server.stats()
            #expect(stats["puts"] as? [String: Int] == ["Clips/clip.mov": 2], "the broken PUT and the whole one: \(stats)")
            #expect(stats["moves"] as? Int == 0 && stats["chunk_puts"] as? Int == 0, "\(stats)")
        }
    }
}
