import Foundation
import Glibc
import Queue
import Testing
import TestSupport

/// Local Drive's tests that need the whole machine: they lower an inotify limit that every
/// inotify user of the machine shares. `make test` runs them with the other whole-machine
/// tests, after the rest and one at a time.
@Suite("Local Drive, with the whole machine: inotify limits", .serialized)
struct LocalDriveWholeMachineTests {
    @Test("a downloaded file deleted while the kernel's event queue overflowed (the deletion never told): its tracking ends once the walk that follows has looked, and a file saved at its name afterwards is never sent")
    func deletedInAnOverflow() async throws {
        try await offThePool {
            let scene = try LocalDriveScene(.referenceWebDAV)
            let pid = try #require(scene.session.agentPID)
            // The kernel sizes a watch's queue when it starts (with the first download here):
            // lowered for that moment only.
            let small = try SysctlOverride("fs.inotify.max_queued_events", "4")
            defer { small.restore() }
            let report = try scene.download("/Documents/report.odt")
            try Poll.until("Local Drive is watched") { ThreadStats.threads(of: String(pid)).contains { $0.name == "iu-watcher" } }
            small.restore()
            let before = try scene.serverSHA("report.odt")
            sleep(2)  // the walk at the watch's start is done
            // The agent stopped, as a starved or suspended one would be: the files made first
            // fill the queue, and the deletion after them is lost in its overflow.
            kill(pid, SIGSTOP)
            defer { kill(pid, SIGCONT) }
            for i in 0..<20 { try Data("note \(i)\n".utf8).write(to: URL(fileURLWithPath: scene.localDrive + "/note-\(i).txt")) }
            #expect(unlink(report) == 0)
            kill(pid, SIGCONT)
            try scene.session.waitForAgentLog("the kernel's event queue overflowed")
            try scene.session.waitForAgentLog("report.odt was not there when Local Drive looked")
            try Data(TestData.bytes(count: 222_222, seed: 66)).write(to: URL(fileURLWithPath: report))
            sleep(6)  // past the settle window and the one for an editor's save
            #expect(try scene.uploads().isEmpty, "the later report.odt was never sent")
            #expect(try scene.serverSHA("report.odt") == before)
            #expect(try QueueStore(path: scene.session.databasePath).localDriveFiles().isEmpty)
        }
    }
}
