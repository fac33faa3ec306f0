import CSystem
import Foundation
import Glibc
import Platform
import Testing
import TestSupport
@testable import Watcher

extension FolderWatcherTests {
    @Test("a file in a folder moved in while its writer still holds it open is not taken, though it stays still for many settle windows; once closed it is taken whole")
    func stillOpenForWriting() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.root)
        try w.start()
        let outside = TemporaryFolder("iu-outside")
        try Files.makeFolder(outside.path + "/Trip")
        let whole = Files.photo(1) + TestData.bytes(count: 64 * 1024, seed: 11)
        let half = whole.count / 2
        let fd = open(outside.path + "/Trip/IMG_1.jpg", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        #expect(fd >= 0)
        #expect(whole.withUnsafeBytes { write(fd, $0.baseAddress, half) } == half)
        // The copy stalls with its file open: the folder is moved in meanwhile.
        try Files.rename(outside.path + "/Trip", w.path("Trip"))
        try w.waitFor("the half-written file waiting") { _ in w.watcher.status.settling >= 1 }
        // Shown as held back, and until when; many settle windows long, so a file taken for
        // being still would be taken by now.
        let before = nowMilliseconds()
        try w.waitFor("the file shown as held back") { _ in !w.watcher.status.waiting.isEmpty }
        usleep(2_000_000)
        let shown = w.watcher.status.waiting
        #expect(shown.map(\.path) == [LocalPath(w.path("Trip/IMG_1.jpg"))] && shown.map(\.why) == [.openForWriting], "\(shown)")
        if let file = shown.first {
            #expect(file.since >= before - 1_000 && file.since <= nowMilliseconds() - 1_500, "since it was first found held")
            #expect(file.until == file.since + 600_000, "taken as it is after the wait")
        }
        #expect(whole.withUnsafeBytes { write(fd, $0.baseAddress! + half, whole.count - half) } == whole.count - half)
        close(fd)
        try w.waitForFound(1)
        try w.scanAndSettle()
        #expect(w.found.count == 1, "taken once: \(w.foundNames)")
        #expect(w.found.first?.fingerprint.size == Int64(whole.count), "taken whole")
        #expect(w.watcher.status.waiting.isEmpty, "held back no more")
    }

    /// A watched folder where a program has written `bytes` to `IMG_1.jpg` and keeps it open.
    static func heldOpen(_ bytes: [UInt8], unfinishedWait: Duration) throws -> (WatchRecorder, Int32) {
        let w = WatchRecorder(settle: .milliseconds(200), unfinishedWait: unfinishedWait)
        try Files.makeFolder(w.root)
        try w.start()
        let fd = open(w.path("IMG_1.jpg"), O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0, bytes.withUnsafeBytes({ write(fd, $0.baseAddress, bytes.count) }) == bytes.count else {
            throw TestFailure("cannot write \(w.path("IMG_1.jpg")): errno \(errno)")
        }
        return (w, fd)
    }

    @Test("a photo a program keeps open for writing without changing it is taken after a while, whole: waiting on, it would never be sent")
    func idleWriter() throws {
        let photo = Files.photo(1)
        let (w, fd) = try Self.heldOpen(photo, unfinishedWait: .seconds(2))
        defer { close(fd) }
        usleep(1_000_000)
        #expect(w.found.isEmpty, "taken while its writer may still be at it")
        try w.waitForFound(1)
        #expect(w.found.first?.fingerprint.size == Int64(photo.count))
        let note = w.found.first?.takenAsItIs ?? ""
        #expect(note.contains("open for writing") && note.contains("may not be whole"), "says why it was taken as it was: \(note)")
    }

    @Test("a photo cut short and still held open (a copy from a source that hangs) is not taken after that wait: it would go damaged; finished, it is taken whole")
    func idleWriterCutShort() throws {
        let photo = Files.photo(1)
        let (w, fd) = try Self.heldOpen(Array(photo.dropLast(40)), unfinishedWait: .seconds(1))
        try w.waitFor("the photo waiting") { _ in w.watcher.status.settling >= 1 }
        usleep(3_000_000)
        #expect(w.found.isEmpty, "taken cut short while its writer holds it: \(w.foundNames)")
        #expect(photo.withUnsafeBytes { write(fd, $0.baseAddress! + photo.count - 40, 40) } == 40)
        close(fd)
        try w.waitForFound(1)
        #expect(w.found.first?.fingerprint.size == Int64(photo.count), "taken whole")
        #expect(w.found.first?.takenAsItIs == nil, "finished, it needs no note")
    }

    @Test("a photo whose copy was interrupted and left under its name (rsync --partial) is not taken cut short; the resumed copy's whole file is taken, once")
    func interruptedCopyResumed() throws {
        let w = WatchRecorder(settle: .milliseconds(200))
        try Files.makeFolder(w.root)
        try w.start()
        let whole = MediaFiles.photo("2024:03:15 10:00:00", imageBytes: 64 * 1024)
        try Files.write(w.path("IMG_1.jpg"), Array(whole.prefix(whole.count / 2)))
        try w.waitFor("the cut-short photo waiting") { _ in w.watcher.status.settling >= 1 }
        // Many settle windows long, so a file taken for being still and closed would be taken by now.
        usleep(1_500_000)
        #expect(w.found.isEmpty, "taken cut short: \(w.foundNames)")
        let shown = w.watcher.status.waiting
        #expect(shown.map(\.path) == [LocalPath(w.path("IMG_1.jpg"))], "\(shown)")
        if case .notWhole(let why) = shown.first?.why {
            #expect(why.contains("a copy interrupted?"), "\(why)")
        } else {
            Issue.record("not shown as not whole: \(shown)")
        }
        // The copy resumed: the whole file written beside it and renamed over it.
        try Files.write(w.path(".IMG_1.jpg.Xy12ab"), whole)
        try Files.rename(w.path(".IMG_1.jpg.Xy12ab"), w.path("IMG_1.jpg"))
        try w.waitForFound(1)
        try w.scanAndSettle()
        #expect(w.foundNames == ["IMG_1.jpg"], "taken once")
        #expect(w.found.first?.fingerprint.size == Int64(whole.count), "taken whole")
        #expect(w.found.first?.takenAsItIs == nil, "whole, it needs no note")
        #expect(w.watcher.status.waiting.isEmpty, "held back no more")
    }

    @Test("a photo that stays cut short is taken as it is after a while: a damaged photo is still backed up")
    func cutShortForGood() throws {
        let w = WatchRecorder(settle: .milliseconds(200), unfinishedWait: .seconds(2))
        try Files.makeFolder(w.root)
        try w.start()
        let half = Array(Files.photo(1).dropLast(40))
        try Files.write(w.path("IMG_1.jpg"), half)
        usleep(1_000_000)
        #expect(w.found.isEmpty)
        try w.waitForFound(1)
        #expect(w.found.first?.fingerprint.size == Int64(half.count))
        let note = w.found.first?.takenAsItIs ?? ""
        #expect(note.hasPrefix("taken as it was after 2 s, though it ends ") && note.hasSuffix("(a copy interrupted?): what is sent may be damaged"),
                "says why it was taken as it was: \(note)")
    }

    @Test("a photo hard-linked into the folder (no IN_CLOSE_WRITE, only IN_CREATE) is found")
    func hardLinkedIn() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.root)
        try w.start()
        let outside = TemporaryFolder("iu-outside")
        let original = try outside.file("IMG_1.jpg", bytes: Files.photo(1))
        #expect(link(original, w.path("IMG_1.jpg")) == 0)
        try w.waitForFound(1)
        #expect(w.foundNames == ["IMG_1.jpg"])
        #expect(w.found.first?.noticedBy == .event)
    }

    @Test("a file that cannot be read is reported as not taken, and found when looked at again once it can be read")
    func unreadableFileLookedAtAgain() throws {
        try Root.require("it reads as another user, to whom a file of root's is closed")
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.root)
        chmod(w.folder.path, 0o755)
        chmod(w.root, 0o755)
        // The watcher's thread is made by this one, and reads as the user this one reads as.
        let started = try DedicatedThread.run { () -> String? in
            _ = csystem_set_thread_fsuid(65534)
            do { try w.start() } catch { return "\(error)" }
            return nil
        }
        if let started { throw TestFailure(started) }
        // Made whole elsewhere, closed to others, then moved in.
        let outside = TemporaryFolder("iu-outside")
        let made = try outside.file("locked.jpg", bytes: Files.photo(1))
        chmod(made, 0o600)
        let path = w.path("locked.jpg")
        try Files.rename(made, path)
        try w.waitFor("the file reported as not taken") { events in
            events.contains { if case .notTaken(let at, let error) = $0 { at == LocalPath(path) && error.errno == EACCES } else { false } }
        }
        #expect(w.found.isEmpty)
        // No event tells the watcher: its owner asks.
        chmod(path, 0o644)
        w.watcher.reconsider([LocalPath(path)])
        try w.waitForFound(1)
        #expect(w.foundNames == ["locked.jpg"])
    }
}
