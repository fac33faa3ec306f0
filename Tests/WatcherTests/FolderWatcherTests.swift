import Foundation
import Glibc
import Platform
import Testing
import TestSupport
@testable import Watcher

/// Real inotify on real temporary folders. One at a time: each is heavy on the two cores
/// of a small machine, and beside every other suite at once their deadlines would measure
/// the load, not the watcher. The tests that change kernel limits or count watcher
/// threads are `WholeMachineTests`, run on their own.
@Suite("Watching a folder", .serialized, .ownThread)
struct FolderWatcherTests {
    @Test("files already in the folder are found by the first scan")
    func existingFiles() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.path("2023"))
        try Files.write(w.path("a.jpg"), Files.photo(1))
        try Files.write(w.path("2023/b.jpg"), Files.photo(2))
        try w.start()
        try w.waitForFound(2)
        #expect(w.foundNames == ["2023/b.jpg", "a.jpg"])
        #expect(w.found.allSatisfy { $0.noticedBy == .scan })
    }

    @Test("quiet only once the folder is walked and nothing settles: a file there at the start, a new one until it is handed over, and one asked to be looked at again keep it busy")
    func quietOnceNothingSettles() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.root)
        try Files.write(w.path("a.jpg"), Files.photo(1))
        #expect(w.watcher.arriving == nil, "not started: nothing comes from it")
        try w.watcher.start()
        #expect(w.watcher.arriving != nil, "not walked yet, or a.jpg settling")
        try w.waitForFound(1)
        try w.waitFor("quiet after a.jpg") { _ in w.watcher.arriving == nil }

        // Held in the handler with b.jpg: it is being handed over, not yet quiet.
        w.foundGate.close()
        try Files.write(w.path("b.jpg"), Files.photo(2))
        try w.waitFor("b.jpg being handed over") { _ in w.foundGate.isHolding }
        #expect(w.watcher.arriving != nil)
        w.foundGate.open()
        try w.waitForFound(2)
        try w.waitFor("quiet after b.jpg") { _ in w.watcher.arriving == nil }

        // A look asked for is pending from the moment it is asked until it has settled.
        w.watcher.reconsider([LocalPath(w.path("a.jpg"))])
        #expect(w.watcher.arriving != nil)
        try w.waitFor("quiet after the look") { _ in w.watcher.arriving == nil }
        #expect(w.found.count == 2, "a.jpg, taken already, is not handed over again")
    }

    @Test("many files copied in at once are each found exactly once; temporary names and other files are not")
    func manyAtOnce() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.root)
        try w.start()
        try Files.makeFolder(w.path("sub"))
        for i in 0..<300 { try Files.write(w.path(i % 3 == 0 ? "sub/IMG_\(i).jpg" : "IMG_\(i).jpg"), Files.photo(i)) }
        try Files.write(w.path("notes.txt"), Array("not a picture\n".utf8))
        try Files.write(w.path("IMG_999.jpg.part"), Files.photo(999))
        try Files.write(w.path(".hidden.jpg"), Files.photo(998))
        try Files.write(w.path("IMG_997.jpg~"), Files.photo(997))
        try w.waitForFound(300)
        try w.scanAndSettle()
        #expect(w.found.count == 300)
        #expect(Set(w.found.map(\.path)).count == 300)
        // In the folder made just before, some land before its watch and are found by its scan.
        #expect(w.found.filter { !$0.relativePath.text.hasPrefix("sub/") }.allSatisfy { $0.noticedBy == .event })
        #expect(!w.foundNames.contains { $0.hasSuffix(".txt") || $0.hasSuffix(".part") || $0.hasPrefix(".") || $0.hasSuffix("~") })
    }

    @Test("files moved in from elsewhere are found, and a download renamed from .part when done")
    func movedIn() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.root)
        try w.start()
        let outside = TemporaryFolder("iu-outside")
        for i in 0..<50 { try Files.write(outside.path + "/MOV_\(i).jpg", Files.photo(i)) }
        try Files.write(w.path("download.jpg.part"), Files.photo(100))
        for i in 0..<50 { try Files.rename(outside.path + "/MOV_\(i).jpg", w.path("MOV_\(i).jpg")) }
        try Files.rename(w.path("download.jpg.part"), w.path("download.jpg"))
        try w.waitForFound(51)
        try w.scanAndSettle()
        #expect(w.found.count == 51)
        #expect(w.foundNames.contains("download.jpg"))
    }

    @Test("a file written slowly, closed and reopened, is taken once and only when whole")
    func slowWriter() throws {
        let w = WatchRecorder(settle: .seconds(3))
        try Files.makeFolder(w.root)
        try w.start()
        let photo = Files.photo(1)
        let chunk = 4096
        let padding = TestData.bytes(count: chunk * 14, seed: 7)
        let whole = photo + padding
        // Each piece is its own open-write-close: an IN_CLOSE_WRITE every 0.3 s for about 5 s.
        var written = 0
        while written < whole.count {
            let end = min(whole.count, written + chunk)
            try Files.write(w.path("slow.jpg"), Array(whole[written..<end]), append: true)
            written = end
            usleep(300_000)
        }
        try w.waitForFound(1)
        try w.scanAndSettle()
        #expect(w.found.count == 1)
        #expect(w.found.first?.fingerprint.size == Int64(whole.count))
    }

    @Test("only the kinds the rule takes: a pictures rule ignores videos")
    func picturesOnly() throws {
        let w = WatchRecorder(media: MediaSelection(pictures: true, videos: false))
        try Files.makeFolder(w.root)
        try w.start()
        try Files.write(w.path("clip.mp4"), MediaFiles.movie(creation: 1_700_000_000))
        try Files.write(w.path("photo.jpg"), Files.photo(1))
        try Files.write(w.path("clip.jpg"), MediaFiles.movie(creation: 1_700_000_001))
        try w.waitForFound(1)
        try w.scanAndSettle()
        #expect(w.foundNames == ["photo.jpg"])
        #expect(w.found.first?.media?.captureDate.source == .exif)
    }

    @Test("a new subfolder with files already in it is scanned at once, and watched below")
    func newSubfolder() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.root)
        try w.start()
        // Made outside and moved in whole: its files never make an event inside the tree.
        let outside = TemporaryFolder("iu-outside")
        try Files.makeFolder(outside.path + "/Trip/Day 1")
        try Files.write(outside.path + "/Trip/a.jpg", Files.photo(1))
        try Files.write(outside.path + "/Trip/Day 1/b.jpg", Files.photo(2))
        try Files.rename(outside.path + "/Trip", w.path("Trip"))
        // Made in place, with a file written at once.
        try Files.makeFolder(w.path("New/Deeper"))
        try Files.write(w.path("New/Deeper/c.jpg"), Files.photo(3))
        try w.waitForFound(3)
        // The new folders have their watches: later files arrive by event.
        try Files.write(w.path("Trip/Day 1/d.jpg"), Files.photo(4))
        try w.waitForFound(4)
        #expect(w.foundNames == ["New/Deeper/c.jpg", "Trip/Day 1/b.jpg", "Trip/Day 1/d.jpg", "Trip/a.jpg"])
        #expect(w.found.first { $0.path.text.hasSuffix("d.jpg") }?.noticedBy == .event)
    }

    @Test("a file whose name is not UTF-8 is found under its exact bytes")
    func oddName() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.root)
        try w.start()
        let name = Array("caf".utf8) + [0xE9, 0x0A] + Array(".jpg".utf8)
        let path = LocalPath(w.root).appending(LocalPath(bytes: name))
        let photo = Files.photo(1)
        let fd = path.withCString { open($0, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644) }
        #expect(photo.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == photo.count)
        close(fd)
        try w.waitForFound(1)
        #expect(w.found.first?.path == path)
        #expect(w.found.first?.relativePath.bytes == name)
    }
}
