import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing
import Transport

/// Local Drive's round trip when a downloaded file is renamed: by hand, by an editor that
/// keeps a backup, twice or back, over another file, or two files trading names.
extension LocalDriveTests {
    @Test("saved by an editor that keeps a backup (the file renamed away, the new one renamed into its name): the new one goes back as the new version, the backup never does; a plain rename is still followed")
    func savedWithABackup() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let report = try scene.download("/Documents/report.odt")
            let notes = try scene.download("/Documents/notes.txt")
            func save(_ path: String, backup: String, seed: UInt64, keepBackup: Bool) throws -> String {
                let temporary = path + "___jb_tmp___"
                try Data(TestData.bytes(count: 260_000 + Int(seed), seed: seed)).write(to: URL(fileURLWithPath: temporary))
                #expect(rename(path, backup) == 0 && rename(temporary, path) == 0)
                if !keepBackup { #expect(unlink(backup) == 0) }
                return try TestData.sha256(ofFile: path)
            }
            // JetBrains' safe write, then Blender's numbered backup.
            let first = try save(report, backup: report + "___jb_old___", seed: 91, keepBackup: false)
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == first)
            let second = try save(report, backup: scene.localDrive + "/report.odt1", seed: 92, keepBackup: true)
            try scene.waitForUploads(2)
            #expect(try scene.serverSHA("report.odt") == second)
            // A plain rename, then an edit under the new name: still the same server file.
            let renamed = scene.localDrive + "/notes (final).txt"
            #expect(rename(notes, renamed) == 0)
            // Edited at once: the watcher may read the rename after the edit.
            try scene.overwrite(renamed, seed: 93)
            try scene.waitForUploads(3)
            #expect(try scene.serverSHA("notes.txt") == (try TestData.sha256(ofFile: renamed)))
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no backup and no conflicted copy on the server")
            #expect(try scene.uploads().map(\.remotePath) == ["/Documents/report.odt", "/Documents/report.odt", "/Documents/notes.txt"])
        }
    }

    @Test("renamed within Local Drive while its new version waits, and sent at once: the version goes from the new name, and the next edit there replaces it")
    func renamedWhileWaiting() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let local = try scene.download("/Documents/report.odt")
            #expect(try scene.session.cli(["pause", "--all"]).status == 0)
            try scene.overwrite(local, seed: 61)
            try scene.session.waitFor("the new version in the queue") { items in items.contains { $0["direction"] as? String == "upload" } }
            let renamed = scene.localDrive + "/report (mine).odt"
            #expect(rename(local, renamed) == 0)
            // Sent at once: it starts before the rename is followed, finds no file at its
            // name, and tries again once the rename has been followed.
            #expect(try scene.session.cli(["resume", "--all"]).status == 0)
            try scene.waitForUploads(1)
            #expect(try scene.uploads().first?.localPath == LocalPath(renamed))
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: renamed)))
            try scene.overwrite(renamed, seed: 62)
            try scene.waitForUploads(2)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: renamed)))
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no conflicted copy")
            #expect(try scene.uploads().map(\.state) == [.completed, .completed])
        }
    }

    @Test("renamed within Local Drive while its new version is being made: the next edit under the new name replaces that version, no conflicted copy")
    func renamedWhileSent() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV, pausedAt: "upload-finishing")
            let local = try scene.download("/Documents/report.odt")
            try scene.overwrite(local, seed: 71)
            let first = try TestData.sha256(ofFile: local)
            try scene.session.waitForAgentLog("paused at upload-finishing")
            let renamed = scene.localDrive + "/report (mine).odt"
            #expect(rename(local, renamed) == 0)
            let store = try QueueStore(path: scene.session.databasePath)
            try scene.session.waitFor("the rename followed") { _ in (try? store.localDriveFile(at: LocalPath(renamed))) != nil }
            scene.session.releasePause()
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == first)
            #expect(try store.localDriveFile(at: LocalPath(renamed))?.sha256 == first, "the version made is remembered under the new name")
            try scene.overwrite(renamed, seed: 72)
            try scene.waitForUploads(2)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: renamed)))
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no conflicted copy")
        }
    }

    @Test("renamed, then saved by an editor that renames the file to a backup name and writes anew (vim, Emacs), within the seconds before the rename is followed: the save goes back from the new name")
    func renamedThenSavedWithABackup() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            // Local Drive watched already when report.odt arrives (the watch starts with the first download).
            let notes = try scene.download("/Documents/notes.txt")
            let report = try scene.download("/Documents/report.odt")
            let mine = scene.localDrive + "/mine.odt"
            #expect(rename(report, mine) == 0)
            sleep(1)
            #expect(rename(mine, mine + "~") == 0)
            try Data(TestData.bytes(count: 210_000, seed: 68)).write(to: URL(fileURLWithPath: mine))
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: mine)), "the save went back")
            #expect(try scene.uploads().first?.localPath == LocalPath(mine))
            sleep(9)  // past the window: the name is not empty, the tracking stays
            #expect(Set(try QueueStore(path: scene.session.databasePath).localDriveFiles().map(\.localPath)) == [LocalPath(mine), LocalPath(notes)])
        }
    }

    @Test("renamed and edited once its download's row completed, before Local Drive was told of the download (the completion's own look for a rename has passed): the rename is followed, and the edit goes back from the new name")
    func renamedBeforeLocalDriveWasTold() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let notes = try scene.download("/Documents/notes.txt")
            // Local Drive watches (a file is tracked) when the next download arrives, and the
            // agent waits between completing its row and telling Local Drive of it.
            scene.session.stopAgent()
            scene.session.pause(at: "download-completed")
            try scene.session.startAgent()
            #expect(try scene.session.cli(["download", "/Documents/report.odt"]).status == 0)
            try scene.session.waitForAgentLog("paused at download-completed")
            let mine = scene.localDrive + "/mine.odt"
            #expect(rename(scene.localDrive + "/report.odt", mine) == 0)
            try scene.overwrite(mine, seed: 71)
            // The watcher hears the rename and the edit settles, all before Local Drive is told.
            sleep(4)
            scene.session.releasePause()
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: mine)), "the edit went back")
            #expect(try scene.uploads().first?.localPath == LocalPath(mine), "from its new name")
            #expect(Set(try QueueStore(path: scene.session.databasePath).localDriveFiles().map(\.localPath)) == [LocalPath(mine), LocalPath(notes)])
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no copy")
        }
    }

    @Test("a downloaded file given a second name (a hard link) and deleted under the first: its tracking follows the name left, and an edit there goes back")
    func hardLinkLeftBehind() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let report = try scene.download("/Documents/report.odt")
            let second = scene.localDrive + "/report (copy).odt"
            #expect(link(report, second) == 0)
            #expect(unlink(report) == 0)
            let store = try QueueStore(path: scene.session.databasePath)
            try scene.session.waitFor("the tracking at the second name") { _ in (try? store.localDriveFile(at: LocalPath(second))) != nil }
            try scene.overwrite(second, seed: 66)
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: second)))
            #expect(try scene.uploads().first?.localPath == LocalPath(second))
        }
    }

    @Test("two downloaded files swap names in one step (mv --exchange): each stays the download it was, under its new name; nothing is sent when the agent starts again, and an edit goes back to the file it came from")
    func swappedNames() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let report = try scene.download("/Documents/report.odt")
            let notes = try scene.download("/Documents/notes.txt")
            let (reportSHA, notesSHA) = (try scene.serverSHA("report.odt"), try scene.serverSHA("notes.txt"))
            try Renames.exchange(report, notes)
            // Long enough for the watcher to hear it, and for a rename to be followed.
            sleep(4)
            scene.session.stopAgent()
            try scene.session.startAgent()
            sleep(4)
            let afterRestart = try scene.uploads()
            #expect(afterRestart.isEmpty, "the swapped files are not edits: \(afterRestart.map(\.remotePath))")
            // The file named notes.txt now is the download of report.odt.
            try scene.overwrite(notes, seed: 61)
            try scene.waitForUploads(1)
            #expect(try scene.uploads().map(\.newVersionOf) == ["/Documents/report.odt"])
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: notes)))
            #expect(try scene.serverSHA("notes.txt") == notesSHA, "the other server file is untouched")
            #expect(reportSHA != notesSHA)
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no copy")
        }
    }

    @Test("renamed twice, renamed back, or moved into a new folder that is then named, all within the seconds before a rename is followed: the next edit goes back from where the file is",
          arguments: [["report.odt:draft.odt", "draft.odt:final.odt"],
                      ["report.odt:draft.odt", "draft.odt:report.odt"],
                      ["report.odt:new/report.odt", "new:Final"]])
    func renamedAgainWithinTheWindow(_ steps: [String]) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            _ = try scene.download("/Documents/report.odt")
            #expect(mkdir(scene.localDrive + "/new", 0o755) == 0)
            var now = ""
            for step in steps {
                // A second apart, as a person renaming in a file manager: each rename is heard on its own.
                if !now.isEmpty { sleep(1) }
                let names = step.split(separator: ":").map(String.init)
                #expect(rename(scene.localDrive + "/" + names[0], scene.localDrive + "/" + names[1]) == 0)
                now = names[1]
            }
            let local = scene.localDrive + "/" + (now == "Final" ? "Final/report.odt" : now)
            // Past the window: the renames are followed.
            sleep(10)
            try scene.overwrite(local, seed: 97)
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: local)), "the edit went back")
            let tracked = try QueueStore(path: scene.session.databasePath).localDriveFiles()
            #expect(tracked.map(\.localPath.text) == [local])
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no copy")
        }
    }

    @Test("two downloaded files whose edits wait swap names through a third name (mv a t; mv b a; mv t b) within the seconds before a rename is followed, the third an ordinary name or one the watcher leaves out as temporary: each edit goes back to the file it came from",
          arguments: ["aside.odt", "swap.tmp"])
    func swappedThroughATemporaryName(_ third: String) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let (report, notes, reportEdit, notesEdit) = try scene.twoEditsWaiting(seeds: (63, 64))
            let aside = scene.localDrive + "/" + third
            for (from, to) in [(report, aside), (notes, report), (aside, notes)] {
                #expect(rename(from, to) == 0)
                usleep(300_000)  // each heard on its own
            }
            sleep(10)  // past the window: the renames are followed
            #expect(try scene.session.cli(["resume", "--all"]).status == 0)
            try scene.waitForUploads(2)
            #expect(try scene.serverSHA("report.odt") == reportEdit)
            #expect(try scene.serverSHA("notes.txt") == notesEdit)
            let tracked = try QueueStore(path: scene.session.databasePath).localDriveFiles()
            #expect(Set(tracked.map { "\($0.localPath.lastComponent.text) <- \($0.remotePath)" })
                    == ["notes.txt <- /Documents/report.odt", "report.odt <- /Documents/notes.txt"])
        }
    }

    @Test("two downloaded files whose edits wait trade names while the agent is stopped, in one step or through a name the watcher leaves out: each edit goes back to the file it came from when it starts again",
          arguments: [true, false])
    func tradedNamesWhileStopped(_ inOneStep: Bool) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let (report, notes, reportEdit, notesEdit) = try scene.twoEditsWaiting(seeds: (66, 67))
            scene.session.stopAgent()
            if inOneStep {
                try Renames.exchange(report, notes)
            } else {
                let aside = scene.localDrive + "/swap.tmp"
                for (from, to) in [(report, aside), (notes, report), (aside, notes)] { #expect(rename(from, to) == 0) }
            }
            try scene.session.startAgent()
            // Let go at once: the edits may run before Local Drive has seen the trade.
            #expect(try scene.session.cli(["resume", "--all"]).status == 0)
            try scene.waitForUploads(2)
            #expect(try scene.serverSHA("report.odt") == reportEdit)
            #expect(try scene.serverSHA("notes.txt") == notesEdit)
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no copy")
        }
    }

    @Test("a downloaded file renamed over another whose edit waits (mv report.odt notes.txt), the queue let go before the rename is followed or after, the file renamed edited or not: the replaced file's edit goes with it, nothing goes over notes.txt on the server, and the edits of the file renamed go back to report.odt",
          arguments: [(false, false), (true, false), (false, true)])
    func renamedOverAnotherWithAnEditWaiting(_ followedFirst: Bool, _ renamedEdited: Bool) async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let report = try scene.download("/Documents/report.odt")
            let notes = try scene.download("/Documents/notes.txt")
            let (reportBefore, notesBefore) = (try scene.serverSHA("report.odt"), try scene.serverSHA("notes.txt"))
            try scene.editWhilePaused(notes, seed: 61)
            var reportNow = reportBefore
            if renamedEdited {
                try scene.overwrite(report, seed: 65)
                reportNow = try TestData.sha256(ofFile: report)
                try scene.session.waitFor("its edit queued too") { items in items.filter { $0["direction"] as? String == "upload" }.count == 2 }
            }
            #expect(rename(report, notes) == 0)
            // Once the window has passed, the rename is followed: notes.txt is report.odt's download.
            let followed = { () throws -> Void in
                try scene.session.waitFor("the rename followed") { _ in
                    (try? QueueStore(path: scene.session.databasePath).localDriveFile(at: LocalPath(notes)))??.remotePath == "/Documents/report.odt"
                }
            }
            if followedFirst { try followed() }
            #expect(try scene.session.cli(["resume", "--all"]).status == 0)
            try scene.session.waitFor("the replaced file's edit gone") { items in
                items.filter { $0["direction"] as? String == "upload" && $0["state"] as? String != "completed" }.isEmpty
                    && items.filter { $0["direction"] as? String == "upload" }.count == (renamedEdited ? 1 : 0)
            }
            #expect(scene.session.agentLog.contains(followedFirst ? "renamed over it; the edit of the file that was there" : "the edit went with the file it was made in"),
                    "\(scene.session.agentLog.suffix(1500))")
            #expect(try scene.serverSHA("notes.txt") == notesBefore, "nothing went over notes.txt")
            #expect(try scene.serverSHA("report.odt") == reportNow, "report.odt is as it was, or its edit")
            try followed()
            try scene.overwrite(notes, seed: 62)
            try scene.waitForUploads(renamedEdited ? 2 : 1)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: notes)), "the edit went back to the file it came from")
            #expect(try scene.serverSHA("notes.txt") == notesBefore)
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no copy, no temporary")
        }
    }
}
