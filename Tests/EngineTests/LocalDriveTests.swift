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
            try scene.overwrite(local, seed: 81)
            try scene.session.waitForAgentLog("paused at upload-finishing")
            try scene.overwrite(local, seed: 82)
            // The watcher has taken the second save before the first goes on.
            try scene.session.waitFor("the second save seen") { _ in
                scene.session.agentLog.components(separatedBy: "report.odt changed; ").count - 1 >= 2
            }
            scene.session.releasePause()
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

    @Test("a downloaded file deleted, or moved to the trash, and a file saved at its name later (once the seconds an editor's save takes have passed): the later file is another, never sent, and the server's file is untouched; one deleted and written anew at once is an editor's save, and goes back")
    func deletedAndNameLeftEmpty() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let report = try scene.download("/Documents/report.odt")
            let old = try scene.download("/Documents/old.odt")
            let notes = try scene.download("/Documents/notes.txt")
            let before = (report: try scene.serverSHA("report.odt"), old: try scene.serverSHA("old.odt"))
            let trash = scene.session.home.path + "/Trash"
            #expect(mkdir(trash, 0o700) == 0)
            #expect(unlink(report) == 0)
            #expect(rename(old, trash + "/old.odt") == 0)
            try scene.session.waitForAgentLog("report.odt is gone (deleted, or moved out of Local Drive); its edits no longer go back")
            try scene.session.waitForAgentLog("old.odt is gone (deleted, or moved out of Local Drive); its edits no longer go back")
            try Data(TestData.bytes(count: 222_222, seed: 61)).write(to: URL(fileURLWithPath: report))
            try Data(TestData.bytes(count: 222_223, seed: 65)).write(to: URL(fileURLWithPath: old))
            // Deleted and written anew, as some editors save.
            #expect(unlink(notes) == 0)
            try Data(TestData.bytes(count: 111_111, seed: 62)).write(to: URL(fileURLWithPath: notes))
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("notes.txt") == (try TestData.sha256(ofFile: notes)), "the editor's save went back")
            // Past the window of the save at report.odt's name, and the agent started again.
            sleep(4)
            scene.session.stopAgent()
            try scene.session.startAgent()
            sleep(4)
            #expect(try scene.uploads().map(\.remotePath) == ["/Documents/notes.txt"], "the later report.odt and old.odt were never sent")
            #expect(try scene.serverSHA("report.odt") == before.report)
            #expect(try scene.serverSHA("old.odt") == before.old)
            let tracked = try QueueStore(path: scene.session.databasePath).localDriveFiles()
            #expect(tracked.map(\.localPath.text) == [notes])
        }
    }

    @Test("a downloaded file deleted while the agent was stopped: its tracking ends once the agent has looked, and a file saved at its name afterwards is never sent; one moved into a folder meanwhile stays tracked")
    func deletedWhileStopped() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let report = try scene.download("/Documents/report.odt")
            let notes = try scene.download("/Documents/notes.txt")
            let reportBefore = try scene.serverSHA("report.odt")
            scene.session.stopAgent()
            #expect(unlink(report) == 0)
            #expect(mkdir(scene.localDrive + "/kept", 0o755) == 0)
            let kept = scene.localDrive + "/kept/notes.txt"
            #expect(rename(notes, kept) == 0)
            try scene.session.startAgent()
            try scene.session.waitForAgentLog("report.odt was not there when Local Drive looked")
            try Data(TestData.bytes(count: 222_222, seed: 63)).write(to: URL(fileURLWithPath: report))
            try scene.overwrite(kept, seed: 64)
            try scene.waitForUploads(1)
            sleep(2)
            #expect(try scene.uploads().map(\.remotePath) == ["/Documents/notes.txt"], "only the tracked file's edit went")
            #expect(try scene.serverSHA("notes.txt") == (try TestData.sha256(ofFile: kept)))
            #expect(try scene.serverSHA("report.odt") == reportBefore)
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

    @Test("Local Drive on a file system not mounted when the agent starts (a disk or share that comes later): its files keep their tracking, and an edit goes back once they are there again")
    func localDriveNotMountedAtStart() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let home = scene.session.home.path
            defer { TestMounts.unmountAll(below: home) }
            // Mounted before the first download makes Local Drive (nothing watches it yet).
            let disk = home + "/disk"
            for folder in [disk, scene.localDrive] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            try TestMounts.mountTmpfs(at: disk)
            try TestMounts.bind(disk, at: scene.localDrive)
            let report = try scene.download("/Documents/report.odt")
            scene.session.stopAgent()
            try TestMounts.unmount(scene.localDrive)
            try scene.session.startAgent()
            sleep(12)  // past the look after the walk at the start
            scene.session.stopAgent()
            #expect(try QueueStore(path: scene.session.databasePath).localDriveFiles().map(\.localPath) == [LocalPath(report)])
            #expect(!scene.session.agentLog.contains("was not there"))
            try TestMounts.bind(disk, at: scene.localDrive)
            try scene.session.startAgent()
            try scene.overwrite(report, seed: 69)
            try scene.waitForUploads(1)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: report)))
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
            try scene.session.stopAgent()
            try scene.overwrite(temporary, seed: 52)
            try scene.session.startAgent()
            try scene.waitForUploads(2)
            #expect(try scene.serverSHA("draft.tmp") == (try TestData.sha256(ofFile: temporary)), "the edit made while the agent was stopped")
            #expect(try scene.uploads().map(\.newVersionOf) == ["/Documents/settings.bak", "/Documents/draft.tmp"])
            #expect(try scene.listing() == ["draft.tmp", "notes.txt", "old.odt", "report.odt", "settings.bak"], "no copy")
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
            try scene.session.stopAgent()
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
            let tracked = try QueueStore(path: scene.session.databasePath).localDriveFiles()
            #expect(Set(tracked.map { "\($0.localPath.lastComponent.text) <- #\($0.downloadID)" })
                    == ["notes.txt <- #1", "report (mine).odt <- #2", "report.odt <- #3"])
        }
    }

    @Test("a downloaded file deleted, another file saved in Local Drive (given the inode the deletion freed, as ext4 does), and the file downloaded again: the other file is not taken for the deleted one renamed, and is never sent over the server's file")
    func newFileGivenTheFreedInode() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let local = try scene.download("/Documents/report.odt")
            let before = try scene.serverSHA("report.odt")
            let freed = try FileFingerprint.of(LocalPath(local))
            #expect(unlink(local) == 0)
            let other = scene.localDrive + "/summary.odt"
            try Data(TestData.bytes(count: 123_456, seed: 95)).write(to: URL(fileURLWithPath: other))
            if try FileFingerprint.of(LocalPath(other)).inode != freed.inode {
                print("note: this file system gave the new file another inode; the test shows less here")
            }
            #expect(try scene.session.cli(["download", "/Documents/report.odt"]).status == 0)
            try scene.session.waitFor("the download again") { items in
                items.filter { $0["direction"] as? String == "download" && $0["state"] as? String == "completed" }.count == 2
            }
            // The other file written again, and the agent started again: either would send it
            // had it been taken for the tracked file.
            try Data(TestData.bytes(count: 123_457, seed: 96)).write(to: URL(fileURLWithPath: other))
            sleep(4)
            scene.session.stopAgent()
            try scene.session.startAgent()
            sleep(4)
            let tracked = try QueueStore(path: scene.session.databasePath).localDriveFiles()
            #expect(tracked.map(\.localPath.text) == [local])
            #expect(try scene.uploads().isEmpty, "nothing went")
            #expect(try scene.serverSHA("report.odt") == before, "the server's file is untouched")
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no copy")
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
            if followedFirst { sleep(10) }
            #expect(try scene.session.cli(["resume", "--all"]).status == 0)
            try scene.session.waitFor("the replaced file's edit gone") { items in
                items.filter { $0["direction"] as? String == "upload" && $0["state"] as? String != "completed" }.isEmpty
                    && items.filter { $0["direction"] as? String == "upload" }.count == (renamedEdited ? 1 : 0)
            }
            #expect(scene.session.agentLog.contains(followedFirst ? "renamed over it; the edit of the file that was there" : "the edit went with the file it was made in"),
                    "\(scene.session.agentLog.suffix(1500))")
            #expect(try scene.serverSHA("notes.txt") == notesBefore, "nothing went over notes.txt")
            #expect(try scene.serverSHA("report.odt") == reportNow, "report.odt is as it was, or its edit")
            if !followedFirst { sleep(10) }
            try scene.overwrite(notes, seed: 62)
            try scene.waitForUploads(renamedEdited ? 2 : 1)
            #expect(try scene.serverSHA("report.odt") == (try TestData.sha256(ofFile: notes)), "the edit went back to the file it came from")
            #expect(try scene.serverSHA("notes.txt") == notesBefore)
            #expect(try scene.listing() == ["notes.txt", "old.odt", "report.odt"], "no copy, no temporary")
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

/// A server of a kind with `/Documents/report.odt` (and two more files) on it, a person
/// with the account, and the agent running with a short settle window for Local Drive.
struct LocalDriveScene {
    let running: ServerKind.Running
    let session: AgentHarness
    let dav: WebDAVClient

    var localDrive: String { session.downloads }

    /// `pausedAt`: a crash window the agent's transfers wait at (`AgentHarness.pause(at:)`);
    /// `serverArguments` go to a reference server.
    init(_ kind: ServerKind, pausedAt: String? = nil, serverArguments: [String] = []) throws {
        running = try ServerKind.Running(kind, arguments: serverArguments)
        session = try AgentHarness()
        if let pausedAt { session.pause(at: pausedAt) }
        try session.writeConfig(agentConfig() + "[downloads]\ntrack_edits = yes\n")
        try session.addAccount(address: running.address, user: running.user, password: running.password)
        let account = try #require(try QueueStore(path: session.databasePath).account(named: "home"))
        dav = WebDAVClient(root: account.webdavURL, credentials: Credentials(username: running.user, password: running.password))
        try dav.makeFolders("/Documents")
        for (name, seed) in [("report.odt", 1), ("notes.txt", 2), ("old.odt", 3)] {
            _ = try dav.put(.bytes(TestData.bytes(count: 200_000, seed: UInt64(seed))), to: "/Documents/" + name)
        }
        try session.startAgent()
    }

    /// Downloads `path` and waits until it is in Local Drive; its local path.
    func download(_ path: String, arguments: [String] = []) throws -> String {
        let before = try session.items().count
        let r = try session.cli(["download"] + arguments + [path])
        guard r.status == 0 else { throw TestFailure("download failed (\(r.status)): \(r.stderr)") }
        try session.waitFor("the download of \(path)") { items in
            items.count == before + 1 && items.allSatisfy { $0["state"] as? String == "completed" }
        }
        let local = localDrive + "/" + String(path.split(separator: "/").last!)
        guard FileManager.default.fileExists(atPath: local) else { throw TestFailure("\(local) is not there") }
        return local
    }

    /// Restarts the agent with its downloads set to wait once their file is in place, their
    /// row not completed yet (the crash window `download-in-place`), until `releasePause`.
    func holdDownloadsInPlace() throws {
        session.stopAgent()
        session.pause(at: "download-in-place")
        try session.startAgent()
    }

    /// Downloads `path` with the agent's downloads held in place, and waits until it is.
    func downloadHeldInPlace(_ path: String) throws {
        let r = try session.cli(["download", path])
        guard r.status == 0 else { throw TestFailure("download failed (\(r.status)): \(r.stderr)") }
        try session.waitForAgentLog("paused at download-in-place")
    }

    /// Writes new bytes into the file in place, as a program saving it would.
    func overwrite(_ path: String, seed: UInt64) throws {
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("cannot open \(path) for writing") }
        defer { close(fd) }
        let bytes = TestData.bytes(count: 250_000 + Int(seed), seed: seed)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else { throw TestFailure("short write") }
    }

    /// Pauses the queue, edits the file in place and waits for its new version to be queued;
    /// the SHA-256 of the edit.
    @discardableResult
    func editWhilePaused(_ path: String, seed: UInt64) throws -> String {
        guard try session.cli(["pause", "--all"]).status == 0 else { throw TestFailure("pause --all failed") }
        try overwrite(path, seed: seed)
        try session.waitFor("the new version in the queue") { items in
            items.contains { $0["direction"] as? String == "upload" && $0["state"] as? String == "queued" }
        }
        return try TestData.sha256(ofFile: path)
    }

    /// Downloads report.odt and notes.txt, pauses the queue and edits both, and waits for
    /// both edits in the queue: the two local paths and the SHA-256 of each edit.
    func twoEditsWaiting(seeds: (UInt64, UInt64)) throws -> (report: String, notes: String, reportEdit: String, notesEdit: String) {
        let report = try download("/Documents/report.odt")
        let notes = try download("/Documents/notes.txt")
        let reportEdit = try editWhilePaused(report, seed: seeds.0)
        try overwrite(notes, seed: seeds.1)
        try session.waitFor("both edits queued") { items in items.filter { $0["direction"] as? String == "upload" }.count == 2 }
        return (report, notes, reportEdit, try TestData.sha256(ofFile: notes))
    }

    /// The upload rows (new versions) of the queue.
    func uploads() throws -> [Transfer] {
        try QueueStore(path: session.databasePath).transfers().filter { $0.direction == .upload }
    }

    /// Waits until `count` uploads have completed.
    func waitForUploads(_ count: Int, timeout: Double = 90) throws {
        try session.waitFor("\(count) new version(s) sent", timeout: timeout) { items in
            items.filter { $0["direction"] as? String == "upload" && $0["state"] as? String == "completed" }.count >= count
        }
    }

    func serverSHA(_ name: String) throws -> String { try TestData.sha256(ofFile: running.tree + "/Documents/" + name) }
    func listing() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: running.tree + "/Documents").sorted() }
}
