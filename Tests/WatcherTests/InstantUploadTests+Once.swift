import Foundation
import Glibc
import Testing
import TestSupport

/// Photos that arrive the ways real folders get them, and change while they wait: each
/// reaches the server once, and whole.
extension InstantUploadTests {
    @Test("a folder moved in while a photo in it is still being written, stalled longer than the settle window: the photo arrives once, whole")
    func stalledCopy() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera"))
        try scene.session.startAgent()
        try scene.addRule("Camera", settle: 1)
        try scene.waitWatching("camera")
        let photo = Camera.photo(1) + TestData.bytes(count: 200_000, seed: 3)
        try Camera.makeFolder(scene.path("staging/Trip"))
        let fd = open(scene.path("staging/Trip/IMG_1.jpg"), O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        #expect(fd >= 0)
        let half = photo.count / 2
        #expect(photo.withUnsafeBytes { write(fd, $0.baseAddress, half) } == half)
        // A phone import that stalls part way, its file still open, after the folder came in.
        try Camera.move(scene.path("staging/Trip"), scene.path("Camera/Trip"))
        sleep(4)
        #expect(photo.withUnsafeBytes { write(fd, $0.baseAddress! + half, photo.count - half) } == photo.count - half)
        close(fd)
        try scene.waitUploaded(1)
        try scene.expectEachOnce(["IMG_1.jpg"]) { _ in scene.path("Camera/Trip/IMG_1.jpg") }
    }

    @Test("a photo whose copy was interrupted and left under its name (rsync --partial) is not sent cut short; resumed, it arrives once, whole")
    func interruptedCopyResumed() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera"))
        try scene.session.startAgent()
        try scene.addRule("Camera", settle: 1)
        try scene.waitWatching("camera")
        let photo = MediaFiles.photo("2024:03:15 10:00:00", comment: "picture 1", imageBytes: 300_000)
        try Camera.write(scene.path("Camera/IMG_1.jpg"), Array(photo.prefix(120_000)))
        // Several settle windows: a closed, still file would be queued by now.
        sleep(4)
        #expect(try scene.session.items().isEmpty, "nothing of the cut-short photo queued")
        #expect(scene.session.agentLog.contains("IMG_1.jpg is not whole: it ends before the picture's end marker"))
        // The copy resumed: the rest written beside it, then renamed over it.
        try Camera.write(scene.path("Camera/.IMG_1.jpg.Q2xk9a"), photo)
        try Camera.move(scene.path("Camera/.IMG_1.jpg.Q2xk9a"), scene.path("Camera/IMG_1.jpg"))
        try scene.waitUploaded(1)
        try scene.expectEachOnce(["IMG_1.jpg"]) { scene.path("Camera/" + $0) }
        #expect(scene.serverFiles() == ["IMG_1.jpg"], "nothing beside it")
    }

    @Test("a photo hard-linked into the folder (ln) is sent")
    func hardLink() throws {
        let scene = try InstantUploadScene.watchingCamera()
        try Camera.write(scene.path("elsewhere/IMG_1.jpg"), Camera.photo(1))
        let ln = try Shell.capture("/bin/ln", [scene.path("elsewhere/IMG_1.jpg"), scene.path("Camera/IMG_1.jpg")])
        #expect(ln.status == 0, "\(ln.stderr)")
        try scene.waitUploaded(1)
        try scene.expectEachOnce(["IMG_1.jpg"]) { scene.path("Camera/" + $0) }
    }

    @Test("a photo touched while its upload waits (the queue paused) reaches the server once")
    func touchedWhileWaiting() throws {
        let scene = try InstantUploadScene.watchingCamera()
        #expect(try scene.session.cli(["pause", "--all"]).status == 0)
        try Camera.write(scene.path("Camera/IMG_1.jpg"), Camera.photo(1))
        try scene.session.waitFor("the photo queued") { $0.count == 1 }
        // A new modification time, the same bytes: what `touch` and a tag editor that
        // changed nothing leave.
        let touch = try Shell.capture("/usr/bin/touch", [scene.path("Camera/IMG_1.jpg")])
        #expect(touch.status == 0, "\(touch.stderr)")
        try scene.until("the watcher seeing the new version") {
            scene.session.agentLog.contains("IMG_1.jpg changed while its upload waited")
        }
        #expect(try scene.session.items().count == 1, "one waiting upload for one file")
        #expect(try scene.session.cli(["resume", "--all"]).status == 0)
        try scene.waitUploaded(1)
        try scene.expectEachOnce(["IMG_1.jpg"]) { scene.path("Camera/" + $0) }
    }

    @Test("a photo renamed over another before either was sent (the queue paused): the one renamed arrives once, and nothing else goes")
    func renamedOverAnotherWaiting() throws {
        let scene = try InstantUploadScene.watchingCamera()
        #expect(try scene.session.cli(["pause", "--all"]).status == 0)
        try Camera.write(scene.path("Camera/IMG_1.jpg"), Camera.photo(1))
        try Camera.write(scene.path("Camera/IMG_2.jpg"), Camera.photo(2))
        try scene.session.waitFor("both queued") { $0.count == 2 }
        try Files.rename(scene.path("Camera/IMG_1.jpg"), scene.path("Camera/IMG_2.jpg"))
        sleep(3)  // heard at once; nothing waits to settle
        #expect(try scene.session.cli(["resume", "--all"]).status == 0)
        try scene.waitUploaded(1)
        sleep(3)
        #expect(scene.session.agentLog.contains("renamed over it, before it was sent"))
        let items = try scene.session.items()
        #expect(items.count == 1, "\(items)")
        #expect(scene.serverFiles().count == 1, "\(scene.serverFiles())")
        #expect(try scene.completions().values.reduce(0, +) == 1)
    }

    @Test("two photos sent swap names (mv --exchange), once while the agent runs and once while it is stopped: neither is sent again")
    func swappedNames() throws {
        let scene = try InstantUploadScene.watchingCamera()
        try Camera.write(scene.path("Camera/IMG_1.jpg"), Camera.photo(1))
        try Camera.write(scene.path("Camera/IMG_2.jpg"), Camera.photo(2))
        try scene.waitUploaded(2)
        let (a, b) = (scene.path("Camera/IMG_1.jpg"), scene.path("Camera/IMG_2.jpg"))
        try Renames.exchange(a, b)
        try scene.until("the agent hearing of the swap") { scene.session.agentLog.contains("swapped names") }
        scene.session.stopAgent()
        try Renames.exchange(a, b)
        try scene.session.startAgent()
        try scene.waitWatching("camera")
        try scene.until("the agent hearing of the second swap") { scene.session.agentLog.contains("swapped names") }
        // A third photo goes through the same rule: once it has arrived, the two had as long.
        try Camera.write(scene.path("Camera/IMG_3.jpg"), Camera.photo(3))
        try scene.waitUploaded(3)
        #expect(try scene.session.items().count == 3, "nothing queued again")
        #expect(scene.serverFiles() == ["IMG_1.jpg", "IMG_2.jpg", "IMG_3.jpg"])
    }

    @Test("a photo sent is renamed while the agent is stopped, and a new photo is saved at its old name, which comes first: the new one is sent, the renamed one not again")
    func renamedWhileStoppedAndANewOneAtItsName() throws {
        let scene = try InstantUploadScene.watchingCamera()
        let first = Camera.photo(1)
        try Camera.write(scene.path("Camera/IMG_1.jpg"), first)
        try scene.waitUploaded(1)
        scene.session.stopAgent()
        try Camera.move(scene.path("Camera/IMG_1.jpg"), scene.path("Camera/IMG_2.jpg"))
        let new = Camera.photo(333)
        try Camera.write(scene.path("Camera/IMG_1.jpg"), new)
        try scene.session.startAgent()
        try scene.waitWatching("camera")
        try scene.waitUploaded(2)
        // A third photo goes through the same rule: once it has arrived, the renamed one had as long.
        try Camera.write(scene.path("Camera/IMG_3.jpg"), Camera.photo(3))
        try scene.waitUploaded(3)
        let items = try scene.session.items()
        #expect(items.count == 3, "\(items.map { $0["target"] ?? "?" })")
        let completions = try scene.completions()
        #expect(completions.values.reduce(0, +) == 3, "\(completions)")
        // Known by its rename, not only caught by the rule's look at its content (read again).
        #expect(!scene.session.agentLog.contains("the same content as"), "\(scene.session.agentLog)")
        // The name on the server was the first photo's: the new one goes beside it.
        let sent = try scene.serverFiles().map { try TestData.sha256(ofFile: scene.server.tree() + "/Photos/" + $0) }
        #expect(sent.sorted() == [try TestData.sha256(first), try TestData.sha256(new), try TestData.sha256(Camera.photo(3))].sorted())
    }

    @Test("two photos sent seem to swap names while the agent is stopped, but one holds another photo with everything a fingerprint shows kept (inode, size, modification time): that one is sent as new, the other not again")
    func swapLookalikeWithOtherContent() throws {
        let scene = try InstantUploadScene.watchingCamera()
        let (a, b) = (scene.path("Camera/IMG_1.jpg"), scene.path("Camera/IMG_2.jpg"))
        try Camera.write(a, Camera.photo(1))
        try Camera.write(b, Camera.photo(2))
        try scene.waitUploaded(2)
        scene.session.stopAgent()
        try Renames.exchange(a, b)
        let other = Camera.photo(4)
        try Self.rewriteKeepingTimes(b, with: other)
        try Self.expectLookalikeSentAsNew(scene, other)
    }

    @Test("a copy of a sent photo (not sent itself) and another sent photo seem to swap names while the agent is stopped, but the copy's inode holds a new photo with everything a fingerprint shows kept: that one is sent as new, nothing else again")
    func swapLookalikeOfACopy() throws {
        let scene = try InstantUploadScene.watchingCamera()
        let (copy, b) = (scene.path("Camera/IMG_1 copy.jpg"), scene.path("Camera/IMG_2.jpg"))
        try Camera.write(scene.path("Camera/IMG_1.jpg"), Camera.photo(1))
        try Camera.write(b, Camera.photo(2))
        try scene.waitUploaded(2)
        try Camera.write(copy, Camera.photo(1))
        try scene.until("the copy known for one") { scene.session.agentLog.contains("the same content as") }
        scene.session.stopAgent()
        try Renames.exchange(copy, b)
        let other = Camera.photo(4)
        try Self.rewriteKeepingTimes(b, with: other)
        try Self.expectLookalikeSentAsNew(scene, other)
    }

    /// The agent started after a swap that left `other` in IMG_2.jpg's file, with everything a
    /// fingerprint shows kept: that photo is sent as new, and nothing else again.
    static func expectLookalikeSentAsNew(_ scene: InstantUploadScene, _ other: [UInt8]) throws {
        try scene.session.startAgent()
        try scene.waitUploaded(3)
        #expect(scene.session.agentLog.contains("swapped names"), "\(scene.session.agentLog)")
        #expect(scene.session.agentLog.contains("IMG_2.jpg looked like a photo already taken, under a new name, but its content is another"))
        let completions = try scene.completions()
        #expect(completions.values.reduce(0, +) == 3, "\(completions)")
        let sent = try scene.serverFiles().map { try TestData.sha256(ofFile: scene.server.tree() + "/Photos/" + $0) }
        #expect(sent.sorted() == [try TestData.sha256(Camera.photo(1)), try TestData.sha256(Camera.photo(2)), try TestData.sha256(other)].sorted())
    }

    /// What a new photo in the inode a rename freed, of the same size and second, looks like:
    /// other bytes written into the file at `path`, its modification time put back.
    static func rewriteKeepingTimes(_ path: String, with bytes: [UInt8]) throws {
        var before = stat()
        guard lstat(path, &before) == 0 else { throw TestFailure("cannot look at \(path)") }
        #expect(Int(before.st_size) == bytes.count, "the test needs photos of one size")
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("cannot open \(path)") }
        let wrote = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        close(fd)
        guard wrote == bytes.count else { throw TestFailure("cannot write \(path)") }
        let times = [before.st_atim, before.st_mtim]
        guard utimensat(AT_FDCWD, path, times, 0) == 0 else { throw TestFailure("cannot put back the times of \(path)") }
    }

    @Test("the same photo saved under two names, the first deleted before it was sent: the photo arrives, once")
    func copyOfDeletedOriginal() throws {
        let photo = Camera.photo(1)
        let scene = try InstantUploadScene.photoAndCopyWaiting(photo)
        unlink(scene.path("Camera/IMG_1.jpg"))
        #expect(try scene.session.cli(["resume", "--all"]).status == 0)
        try scene.session.waitFor("the copy sent", timeout: 120) { items in
            items.contains { $0["target"] as? String == "/Photos/IMG_1 copy.jpg" && $0["state"] as? String == "completed" }
        }
        #expect(scene.serverFiles() == ["IMG_1 copy.jpg"])
        #expect(try scene.completions() == ["Photos/IMG_1 copy.jpg": 1])
        #expect(try TestData.sha256(ofFile: scene.server.tree() + "/Photos/IMG_1 copy.jpg") == (try TestData.sha256(photo)))
    }

    @Test("the same photo saved under two names, the first saved over with another photo before it was sent: both photos arrive, each once")
    func copyOfReplacedOriginal() throws {
        let first = Camera.photo(1)
        let second = Camera.photo(2)
        let scene = try InstantUploadScene.photoAndCopyWaiting(first)
        // An editor saving over the photo: the new version written beside it, then renamed over it.
        try Camera.write(scene.path("Camera/.IMG_1.jpg.tmp"), second)
        try Camera.move(scene.path("Camera/.IMG_1.jpg.tmp"), scene.path("Camera/IMG_1.jpg"))
        try scene.until("the watcher seeing the new version") {
            scene.session.agentLog.contains("IMG_1.jpg changed while its upload waited")
        }
        #expect(try scene.session.cli(["resume", "--all"]).status == 0)
        try scene.waitUploaded(2, timeout: 60)
        try scene.expectEachOnce(["IMG_1.jpg", "IMG_1 copy.jpg"]) { scene.path("Camera/" + $0) }
        #expect(scene.serverFiles() == ["IMG_1 copy.jpg", "IMG_1.jpg"])
        #expect(try TestData.sha256(ofFile: scene.server.tree() + "/Photos/IMG_1.jpg") == (try TestData.sha256(second)))
        #expect(try TestData.sha256(ofFile: scene.server.tree() + "/Photos/IMG_1 copy.jpg") == (try TestData.sha256(first)))
    }
}

extension InstantUploadScene {
    /// The queue paused, `photo` written as `Camera/IMG_1.jpg` and queued, then again as
    /// `IMG_1 copy.jpg`, which the rule recognises and lets wait on the first upload.
    static func photoAndCopyWaiting(_ photo: [UInt8]) throws -> InstantUploadScene {
        let scene = try InstantUploadScene.watchingCamera()
        guard try scene.session.cli(["pause", "--all"]).status == 0 else { throw TestFailure("pause --all failed") }
        try Camera.write(scene.path("Camera/IMG_1.jpg"), photo)
        try scene.session.waitFor("the first queued") { $0.count == 1 }
        try Camera.write(scene.path("Camera/IMG_1 copy.jpg"), photo)
        try scene.until("the copy recognised") { scene.session.agentLog.contains("IMG_1 copy.jpg: the same content as") }
        guard try scene.session.items().count == 1 else { throw TestFailure("the copy was queued instead of waiting on the first") }
        return scene
    }
}
