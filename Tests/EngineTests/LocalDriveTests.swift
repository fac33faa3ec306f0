import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing
import Transport

/// Local Drive's round trip: a downloaded file that another program edits goes back as the
/// new version of the server's file, never over someone else's version, and nothing else
/// in Local Drive is ever sent or deleted.
@Suite("Local Drive: a downloaded file edited here goes back as its new version")
struct LocalDriveTests {
    static let kinds: [ServerKind] = [.nextcloud, .referenceWebDAV, .apache]

    @Test("edited in place: the server's file becomes the edit, once, no (1); a second edit replaces that version in turn",
          arguments: kinds)
    func editedInPlace(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(kind)
            let local = try scene.download("/Documents/report.odt")
            try scene.overwrite(local, seed: 11)
            try scene.waitForUploads(1)
            #expect(try scene.uploads().count == 1, "one upload for one edit")
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: local)))
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"])
            try scene.overwrite(local, seed: 12)
            try scene.waitForUploads(2)
            #expect(try scene.uploads().count == 2, "one more upload for the second edit")
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: local)), "the second edit replaced the first")
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"])
            let rows = try scene.uploads()
            #expect(rows.allSatisfy { $0.newVersionOf == "/Documents/report.odt" && $0.remotePath == "/Documents/report.odt" })
        }
    }

    @Test("saved the way editors do (a temporary written beside it, renamed over it): the same, and the temporary is never sent",
          arguments: kinds)
    func savedThroughATemporary(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(kind)
            let local = try scene.download("/Documents/report.odt")
            let temporary = scene.localDrive + "/lu4711ab.tmp"
            try Data(TestData.bytes(count: 400_000, seed: 21)).write(to: URL(fileURLWithPath: temporary))
            #expect(rename(temporary, local) == 0)
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: local)))
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no temporary, no copy")
            let second = scene.localDrive + "/lu4711ac.tmp"
            try Data(TestData.bytes(count: 300_000, seed: 22)).write(to: URL(fileURLWithPath: second))
            #expect(rename(second, local) == 0)
            try scene.waitForUploads(2)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: local)))
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no temporary, no copy")
            let rows = try scene.uploads()
            #expect(rows.count == 2 && rows.allSatisfy { $0.newVersionOf == "/Documents/report.odt" && $0.remotePath == "/Documents/report.odt" },
                    "\(rows.map(\.remotePath))")
        }
    }

    @Test("the server's copy changed, then the file is edited here: the server keeps its change, the edit goes beside it as a conflicted copy, the local file is untouched",
          arguments: kinds)
    func conflict(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(kind)
            let local = try scene.download("/Documents/report.odt")
            _ = try scene.dav.put(.bytes(TestData.bytes(count: 100_000, seed: 31)), to: "/Documents/report.odt")
            let theirs = try scene.serverSHA("report.odt")
            try scene.overwrite(local, seed: 32)
            let edited = try TestData.sha256(ofFile: local)
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == theirs, "the server's copy keeps its change")
            let names = try scene.listing()
            let copy = try #require(names.first { $0.hasPrefix("report (conflicted copy ") }, "\(names)")
            #expect(names.count == 4, "\(names)")
            #expect(try scene.serverSHA(copy) == edited)
            #expect(try TestData.sha256(ofFile: local) == edited, "the local file is not touched")
            let json = try scene.session.items().first { $0["direction"] as? String == "upload" }
            #expect(json?["conflicted_copy"] as? Bool == true && json?["new_version_of"] as? String == "/Documents/report.odt", "\(json ?? [:])")
            let queue = try scene.session.cli(["queue"]).stdout
            #expect(queue.contains("had changed on the server since it was downloaded"), "\(queue)")
        }
    }

    @Test("another client saves the file right after the agent made its new version, before the agent looked at it: the next edit goes beside their save, never over it",
          arguments: kinds)
    func savedByAnotherRightAfterTheNewVersion(_ kind: ServerKind) async throws {
        try await offThePool {
            // The made version waits for the other client before the agent looks at it.
            let scene = try LocalDriveScene(kind, pausedAt: "upload-made")
            let local = try scene.download("/Documents/report.odt")
            try scene.overwrite(local, seed: 61)
            try scene.session.waitForAgentLog("paused at upload-made")
            // As large as the edit: only the version tells the two apart.
            _ = try scene.dav.put(.bytes(TestData.bytes(count: 250_061, seed: 62)), to: "/Documents/report.odt")
            let theirs = try scene.serverSHA("report.odt")
            scene.session.releasePause()
            // Sent; or, where only a checksum tells the copy there from ours, failed as not
            // matching (the server's copy is not the file: both are true).
            try scene.session.waitFor("the new version sent") { items in
                items.contains { $0["direction"] as? String == "upload" && ["completed", "failed"].contains($0["state"] as? String) }
            }
            try scene.overwrite(local, seed: 63)
            let edited = try TestData.sha256(ofFile: local)
            try scene.session.waitFor("the second edit sent") { items in
                let uploads = items.filter { $0["direction"] as? String == "upload" }
                return uploads.count == 2 && uploads.last?["state"] as? String == "completed"
            }
            #expect(try scene.serverSHA("report.odt") == theirs, "their save is kept")
            let names = try scene.listing()
            #expect(names.count == 4, "\(names)")
            let beside = names.filter { !["notes.txt", "old.odt", "report.odt"].contains($0) }
            #expect(try beside.map(scene.serverSHA) == [edited], "the second edit is beside it: \(names)")
        }
    }

    @Test("saved again while its new version is being made: the server's file becomes the first save, then the second, no conflicted copy; a third save replaces that in turn",
          arguments: kinds)
    func savedAgainWhileSent(_ kind: ServerKind) async throws {
        try await offThePool {
            // The first save's upload waits just before the request that makes the file.
            let scene = try LocalDriveScene(kind, pausedAt: "upload-finishing")
            let local = try scene.download("/Documents/report.odt")
            try scene.saveAgainWhileSent(local, first: 81, second: 82)
            let second = try TestData.sha256(ofFile: local)
            try scene.session.waitFor("the second save on the server") { items in
                items.allSatisfy { $0["state"] as? String == "completed" } && (try? scene.serverSHA("report.odt")) == second
            }
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no conflicted copy")
            try scene.overwrite(local, seed: 83)
            let third = try TestData.sha256(ofFile: local)
            try scene.session.waitFor("the third save on the server") { items in
                items.allSatisfy { $0["state"] as? String == "completed" } && (try? scene.serverSHA("report.odt")) == third
            }
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no conflicted copy")
        }
    }

    @Test("saved again with the same bytes while its new version is being made (an editor's save without changes): that version is sent once and nothing after it, and the next edit replaces it",
          arguments: kinds)
    func savedUnchangedWhileSent(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(kind, pausedAt: "upload-finishing")
            let local = try scene.download("/Documents/report.odt")
            try scene.saveAgainWhileSent(local, first: 81, second: 81)
            let first = try TestData.sha256(ofFile: local)
            try scene.waitForUploads(1)
            // Local Drive looks at the save again once the version is made: it finds the same
            // bytes, or (were it taken for an edit) queues another upload.
            try scene.session.waitFor("the second save looked at again") { items in
                scene.session.agentLog.contains("report.odt was saved with the bytes it had; nothing to send")
                    || items.filter { $0["direction"] as? String == "upload" }.count > 1
            }
            let uploads = try scene.uploads()
            #expect(uploads.count == 1, "one upload: \(uploads.map(\.id))")
            #expect(try scene.serverSHA("report.odt") == first)
            try scene.overwrite(local, seed: 83)
            try scene.waitForUploads(2)
            #expect(try scene.uploads().count == 2)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: local)), "the next edit replaced it")
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no conflicted copy")
        }
    }

    @Test("run --until-idle, with an edit made while no agent ran and saved again while its new version is being made: exits once the second save is on the server, not before")
    func untilIdleSendsEveryEdit() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.nextcloud, pausedAt: "upload-finishing")
            let local = try scene.download("/Documents/report.odt")
            scene.session.stopAgent()
            try scene.overwrite(local, seed: 81)
            try scene.session.startAgent(arguments: ["--until-idle"])
            try scene.saveAgainOnceSending(local, seed: 82)
            let status = scene.session.waitForAgentExit(seconds: 90)
            #expect(status == 0, "\(scene.session.agentLog.suffix(3000))")
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: local)), "the second save is on the server")
            let uploads = try scene.uploads()
            #expect(uploads.count == 2 && uploads.allSatisfy { $0.state == .completed }, "\(uploads.map { ($0.id, $0.state) })")
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no conflicted copy")
        }
    }

    @Test("a server whose replies name a file by another ETag than its listing: each edit still replaces the one before, no conflicted copy, and the upload counts as checked")
    func replyETagsDiffer() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.nextcloud, serverArguments: ["--reply-etags-differ"])
            let local = try scene.download("/Documents/report.odt")
            try scene.overwrite(local, seed: 71)
            try scene.waitForUploads(1)
            try scene.overwrite(local, seed: 72)
            try scene.waitForUploads(2)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: local)), "the second edit replaced the first")
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no conflicted copy")
            #expect(try scene.uploads().allSatisfy { $0.verifiedAt != nil }, "the server showed each new version")
        }
    }

    @Test("a file made in Local Drive by hand, an editor's lock file, a downloaded file deleted here, and a download with --no-track that is edited: nothing sent, nothing deleted on the server",
          arguments: kinds)
    func notASyncFolder(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(kind)
            let untracked = try scene.download("/Documents/notes.txt", arguments: ["--no-track"])
            let deleted = try scene.download("/Documents/old.odt")
            let tracked = try scene.download("/Documents/report.odt")
            try Data("mine".utf8).write(to: URL(fileURLWithPath: scene.localDrive + "/made by hand.txt"))
            try Data("lock".utf8).write(to: URL(fileURLWithPath: scene.localDrive + "/.~lock.report.odt#"))
            try Data("swap".utf8).write(to: URL(fileURLWithPath: scene.localDrive + "/.report.odt.swp"))
            try scene.overwrite(untracked, seed: 41)
            #expect(unlink(deleted) == 0)
            // The edit of a tracked file goes; once it has arrived, the rest has had as long.
            try scene.overwrite(tracked, seed: 42)
            try scene.waitForUploads(1)
            let rows = try scene.uploads()
            #expect(rows.count == 1 && rows.first?.remotePath == "/Documents/report.odt", "\(rows.map(\.remotePath))")
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "nothing new and nothing deleted on the server")
        }
    }

    @Test("a downloaded file whose name the watcher would take for a temporary one (settings.bak, draft.tmp): its edits go back all the same, made while the agent runs or while it is stopped")
    func namesThatLookTemporary() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            for (name, seed) in [("settings.bak", 4), ("draft.tmp", 5)] {
                _ = try scene.dav.put(.bytes(TestData.bytes(count: 100_000, seed: UInt64(seed))), to: "/Documents/" + name)
            }
            let backup = try scene.download("/Documents/settings.bak")
            let temporary = try scene.download("/Documents/draft.tmp")
            try scene.overwrite(backup, seed: 51)
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("settings.bak") == (try TestData.sha256(ofFile: backup)))
            scene.session.stopAgent()
            try scene.overwrite(temporary, seed: 52)
            try scene.session.startAgent()
            try scene.waitForUploads(2)
            #expect(try scene.serverSHA("draft.tmp") == (try TestData.sha256(ofFile: temporary)), "the edit made while the agent was stopped")
            #expect(try scene.uploads().map(\.newVersionOf) == ["/Documents/settings.bak", "/Documents/draft.tmp"])
            #expect(try scene.listing() == ["draft.tmp", "notes.txt", "old.odt", "report.odt", "settings.bak"], "no copy")
        }
    }

    @Test("a new version waiting in a paused queue: queue and show name it, status counts it with the uploads, and cancelling it keeps the local edit, and does not send it when the agent starts again")
    func waitingNewVersion() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let other = try scene.download("/Documents/notes.txt")
            let local = try scene.download("/Documents/report.odt")
            let before = try scene.serverSHA("report.odt")
            let edited = try scene.editWhilePaused(local, seed: 51)
            let row = try #require(try scene.uploads().first)
            #expect(row.newVersionOf == "/Documents/report.odt")

            let queue = try scene.session.cli(["queue"]).stdout
            #expect(queue.contains("new version of home:/Documents/report.odt"), "\(queue)")
            let show = try scene.session.cli(["show", String(row.id)]).stdout
            #expect(show.contains("new version of home:/Documents/report.odt"), "\(show)")
            let status = try JSONSerialization.jsonObject(with: Data(try scene.session.cli(["status", "--json"]).stdout.utf8)) as? [String: Any]
            let uploads = (status?["directions"] as? [String: Any])?["upload"] as? [String: Any]
            #expect(uploads?["queued"] as? Int == 1 && uploads?["total"] as? Int == 1, "\(status ?? [:])")

            let cancel = try scene.session.cli(["cancel", String(row.id)])
            #expect(cancel.status == 0, "\(cancel.stdout) \(cancel.stderr)")
            #expect(try scene.uploads().isEmpty, "the row is gone")
            #expect(try TestData.sha256(ofFile: local) == edited, "the local edit is kept")
            #expect(try scene.serverSHA("report.odt") == before, "the server's file is untouched")
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"])

            // The edit the person declined stays declined; another file's edit still goes.
            scene.session.stopAgent()
            try scene.session.startAgent()
            #expect(try scene.session.cli(["resume", "--all"]).status == 0)
            try scene.overwrite(other, seed: 52)
            try scene.waitForUploads(1)
            sleep(2)
            #expect(try scene.uploads().map(\.remotePath) == ["/Documents/notes.txt"], "the declined edit was queued again")
            #expect(try scene.serverSHA("report.odt") == before, "the server's file is untouched")
        }
    }
}
