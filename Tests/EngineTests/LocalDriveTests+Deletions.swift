import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing
import Transport

/// Local Drive's round trip when a downloaded file goes: deleted, moved to the trash, gone
/// while the agent was stopped, or on a file system not mounted yet.
extension LocalDriveTests {
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
}
