import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing
import Transport

/// Local Drive's round trip when a download lands where a tracked file was or is: downloaded
/// again at a name just renamed or deleted, or a file changed while its download is put in place.
extension LocalDriveTests {
    @Test("renamed within Local Drive (in its folder, or into a folder below) while its edit waits, and downloaded again at its old name at once: the edit goes back from its new name, and the new download keeps its own tracking",
          arguments: ["report (mine).odt", "kept/report.odt"])
    func renamedAndDownloadedAgain(_ newName: String) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let local = try scene.download("/Documents/report.odt")
            let edited = try scene.editWhilePaused(local, seed: 91)
            #expect(mkdir(scene.localDrive + "/kept", 0o755) == 0)
            // Well within the seconds Local Drive waits before it follows a rename (an
            // editor's save into the name would come in them).
            let mine = scene.localDrive + "/" + newName
            #expect(rename(local, mine) == 0)
            #expect(try scene.session.cli(["download", "/Documents/report.odt"]).status == 0)
            #expect(try scene.session.cli(["resume", "--all"]).status == 0)
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == edited, "the edit went back")
            #expect(try scene.uploads().first?.localPath == LocalPath(mine), "from its new name")
            // Past the window: the rename, followed already, is not followed again onto the new download.
            sleep(10)
            let tracked = try QueueStore(path: scene.session.databasePath).localDriveFiles()
            #expect(Set(tracked.map(\.localPath.text)) == [local, mine], "\(tracked.map { ($0.localPath.text, $0.downloadID) })")
            #expect(tracked.first { $0.localPath == LocalPath(local) }?.downloadID == 3, "the new download's own")
            #expect(try scene.uploads().count == 1, "nothing else went")
        }
    }

    @Test("renamed within Local Drive, edited under its new name, and downloaded again at its old name before the edit settled: the edit goes back from the new name, and the new download keeps its own tracking")
    func renamedEditedAndDownloadedAgain() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            // Local Drive watched already when report.odt arrives (the watch starts with the first download).
            _ = try scene.download("/Documents/notes.txt")
            let local = try scene.download("/Documents/report.odt")
            let mine = scene.localDrive + "/report (mine).odt"
            // All within the seconds a saved file takes to settle, and Local Drive waits before it follows a rename.
            #expect(rename(local, mine) == 0)
            try scene.overwrite(mine, seed: 93)
            #expect(try scene.session.cli(["download", "/Documents/report.odt"]).status == 0)
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: mine)), "the edit went back")
            #expect(try scene.uploads().first?.localPath == LocalPath(mine), "from its new name")
            let store = try QueueStore(path: scene.session.databasePath)
            // The second download's row comes before the edit's or after it, as the edit
            // settled after the command or before it (a slow machine).
            let again = try #require(try store.transfers().filter { $0.direction == .download && $0.remotePath == "/Documents/report.odt" }
                .map(\.id).max())
            #expect(again > 2)
            let tracked = try store.localDriveFiles()
            #expect(Set(tracked.map { "\($0.localPath.lastComponent.text) <- #\($0.downloadID)" })
                    == ["notes.txt <- #1", "report (mine).odt <- #2", "report.odt <- #\(again)"])
        }
    }

    @Test("edited between a download's file being put in place and its row completing, the edit settled by then or not: the edit goes back (it was taken for the download as it came, or let go as a file not tracked)",
          arguments: [0, 5])
    func editedAsItIsPlaced(settling: UInt32) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            // Local Drive watched already (another file tracked), and the next download held with its file in place.
            _ = try scene.download("/Documents/notes.txt")
            try scene.holdDownloadsInPlace()
            try scene.downloadHeldInPlace("/Documents/report.odt")
            let local = scene.localDrive + "/report.odt"
            try scene.overwrite(local, seed: 97)
            let edited = try TestData.sha256(ofFile: local)
            sleep(settling)
            scene.session.releasePause()
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == edited, "the edit went back")
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no copy")
        }
    }

    @Test("deleted between a download's file being put in place and its row completing: the name is not tracked once the window has passed, and a file saved there later is never sent")
    func deletedAsItIsPlaced() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV, pausedAt: "download-in-place")
            let before = try scene.serverSHA("report.odt")
            try scene.downloadHeldInPlace("/Documents/report.odt")
            let local = scene.localDrive + "/report.odt"
            #expect(unlink(local) == 0)
            scene.session.releasePause()
            try scene.session.waitForAgentLog("report.odt is gone")
            try Data(TestData.bytes(count: 222_222, seed: 67)).write(to: URL(fileURLWithPath: local))
            sleep(5)
            #expect(try scene.uploads().isEmpty, "nothing went")
            #expect(try scene.serverSHA("report.odt") == before)
        }
    }

    @Test("renamed, another server file of the same name downloaded at its old name, and renamed back over that download before its row completed: the file keeps its own server file, and its edit goes there, not over the other")
    func renamedBackAsADownloadIsPlaced() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            try scene.dav.makeFolders("/Work")
            _ = try scene.dav.put(.bytes(TestData.bytes(count: 150_000, seed: 98)), to: "/Work/report.odt")
            let workBefore = try TestData.sha256(ofFile: scene.running.tree + "/Work/report.odt")
            let local = try scene.download("/Documents/report.odt")
            // The next download waits with its file in place, its row not completed yet.
            try scene.holdDownloadsInPlace()
            let mine = scene.localDrive + "/report (mine).odt"
            #expect(rename(local, mine) == 0)
            try scene.downloadHeldInPlace("/Work/report.odt")
            #expect(rename(mine, local) == 0)
            scene.session.releasePause()
            try scene.session.waitFor("the second download") { items in
                items.filter { $0["direction"] as? String == "download" && $0["state"] as? String == "completed" }.count == 2
            }
            try scene.overwrite(local, seed: 99)
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: local)), "the edit went to its own file")
            #expect(try TestData.sha256(ofFile: scene.running.tree + "/Work/report.odt") == workBefore, "not over the other")
            let tracked = try QueueStore(path: scene.session.databasePath).localDriveFiles()
            #expect(tracked.map { "\($0.localPath.lastComponent.text) <- \($0.remotePath)" } == ["report.odt <- /Documents/report.odt"])
            #expect(scene.session.agentLog.contains("renamed over it at once"), "the log says why the download is not followed")
        }
    }

    @Test("a file deleted and downloaded again while its edit is being sent: the edit arrives, and the download, older, is not taken for an edit of it (it would put the old bytes back over the edit)")
    func downloadedAgainWhileItsEditIsSent() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV, pausedAt: "upload-finishing")
            let local = try scene.download("/Documents/report.odt")
            let before = try scene.serverSHA("report.odt")
            try scene.overwrite(local, seed: 81)
            let edited = try TestData.sha256(ofFile: local)
            try scene.session.waitForAgentLog("paused at upload-finishing")
            #expect(unlink(local) == 0)
            #expect(try scene.session.cli(["download", "/Documents/report.odt"]).status == 0)
            try scene.session.waitFor("the download again") { items in
                items.filter { $0["direction"] as? String == "download" && $0["state"] as? String == "completed" }.count == 2
            }
            #expect(try TestData.sha256(ofFile: local) == before, "downloaded before the edit arrived")
            scene.session.releasePause()
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == edited)
            // What the agent knows of the file is looked at afresh when it starts.
            scene.session.stopAgent()
            try scene.session.startAgent()
            sleep(5)
            let uploads = try scene.uploads()
            #expect(uploads.count == 1, "nothing else went: \(uploads.map(\.id))")
            #expect(try scene.serverSHA("report.odt") == edited, "the edit is still the server's file")
        }
    }

    @Test("a file deleted and downloaded again while its edit is being sent, and the agent killed before the edit was made: the edit went with the deleted file; the download is not sent back as a new version of itself, and what the edit began on the server is removed")
    func downloadedAgainWhileItsEditIsSentThenKilled() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV, pausedAt: "upload-finishing")
            let local = try scene.download("/Documents/report.odt")
            let before = try scene.serverSHA("report.odt")
            try scene.overwrite(local, seed: 83)
            try scene.session.waitForAgentLog("paused at upload-finishing")
            #expect(unlink(local) == 0)
            #expect(try scene.session.cli(["download", "/Documents/report.odt"]).status == 0)
            try scene.session.waitFor("the download again") { items in
                items.filter { $0["direction"] as? String == "download" && $0["state"] as? String == "completed" }.count == 2
            }
            scene.session.killAgent()
            scene.session.environment.removeValue(forKey: "INSTANT_UPLOAD_TEST_PAUSE")
            try scene.session.startAgent()
            try scene.session.waitFor("no upload left") { items in !items.contains { $0["direction"] as? String == "upload" } }
            #expect(scene.session.agentLog.contains("the edit went with the file it was made in"), "\(scene.session.agentLog.suffix(1500))")
            #expect(try scene.serverSHA("report.odt") == before)
            #expect(try TestData.sha256(ofFile: local) == before, "the file downloaded again is the server's")
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no copy, and no temporary left")
            let versions = try scene.session.cli(["queue", "--json"]).stdout
            #expect(!versions.contains("\"upload\""), "\(versions)")
        }
    }

    @Test("a file deleted while its edit is being sent, another server file of the same name downloaded into its place and edited: each edit goes back to its own server file")
    func anotherFileDownloadedIntoItsPlaceWhileItsEditIsSent() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV, pausedAt: "upload-finishing")
            try scene.dav.makeFolders("/Work")
            _ = try scene.dav.put(.bytes(TestData.bytes(count: 150_000, seed: 84)), to: "/Work/report.odt")
            let local = try scene.download("/Documents/report.odt")
            try scene.overwrite(local, seed: 85)
            let first = try TestData.sha256(ofFile: local)
            try scene.session.waitForAgentLog("paused at upload-finishing")
            #expect(unlink(local) == 0)
            #expect(try scene.session.cli(["download", "/Work/report.odt"]).status == 0)
            try scene.session.waitFor("the other download") { items in
                items.filter { $0["direction"] as? String == "download" && $0["state"] as? String == "completed" }.count == 2
            }
            try scene.overwrite(local, seed: 86)
            let second = try TestData.sha256(ofFile: local)
            try scene.session.waitFor("the second edit queued on its own") { items in
                items.filter { $0["direction"] as? String == "upload" }.count == 2
            }
            scene.session.releasePause()
            try scene.waitForUploads(2)
            #expect(try scene.serverSHA("report.odt") == first, "the first edit went to its own file")
            #expect(try TestData.sha256(ofFile: scene.running.tree + "/Work/report.odt") == second, "and the second to its own")
        }
    }

    @Test("a file deleted while its edit waits to go back, then downloaded again: the edit went with it and is not sent (one whose upload had begun is cancelled, and what it began removed), nothing goes back as a new version of itself, and the new download's own edits go back",
          arguments: [false, true])
    func deletedAndDownloadedAgain(_ begun: Bool) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let local = try scene.download("/Documents/report.odt")
            let before = try scene.serverSHA("report.odt")
            try scene.editWhilePaused(local, seed: 71)
            let temporary = "/Documents/.report.odt.begun"
            if begun {
                // As a PUT to a hidden temporary leaves it when the agent stopped before its MOVE.
                _ = try scene.dav.put(.bytes(TestData.bytes(count: 1_000, seed: 73)), to: temporary)
                try QueueStore(path: scene.session.databasePath).database.run(
                    "UPDATE transfers SET upload_url = ? WHERE direction = 'upload'", [.text(temporary)])
            }
            #expect(unlink(local) == 0)
            let download = try scene.session.cli(["download", "/Documents/report.odt"])
            #expect(download.status == 0, "\(download.stderr)")
            #expect(try scene.session.cli(["resume", "--all"]).status == 0)
            try scene.session.waitFor("the download again, and no upload left") { items in
                items.filter { $0["direction"] as? String == "download" && $0["state"] as? String == "completed" }.count == 2
                    && !items.contains { $0["direction"] as? String == "upload" }
            }
            #expect(scene.session.agentLog.contains("was downloaded again; the edit of the file deleted there"), "\(scene.session.agentLog.suffix(1500))")
            #expect(try scene.serverSHA("report.odt") == before, "nothing went back")
            #expect(!FileManager.default.fileExists(atPath: scene.running.tree + temporary), "what the cancelled upload began is removed")
            #expect(try TestData.sha256(ofFile: local) == before, "the file downloaded again is the server's")
            try scene.overwrite(local, seed: 72)
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: local)), "the new download's edit goes back")
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no copy")
        }
    }
}
