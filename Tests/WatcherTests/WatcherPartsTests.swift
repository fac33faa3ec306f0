import Platform
import Testing
@testable import Watcher

@Suite("The settle window")
struct SettlerTests {
    let clock = ContinuousClock()
    let a = LocalPath("/c/a.jpg"), b = LocalPath("/c/b.jpg")
    func fp(_ size: Int64, mtime: Int64 = 1) -> FileFingerprint { FileFingerprint(device: 1, inode: 2, size: size, mtimeNanoseconds: mtime) }

    @Test("a file is settled only once it has held still for the whole window")
    func holdsStill() {
        var s = Settler(window: .seconds(3))
        let t0 = clock.now
        s.touch(a, fp(10), noticedBy: .event, now: t0)
        #expect(s.nextDeadline() == t0 + .seconds(3))
        #expect(s.settle(now: t0 + .seconds(2)) { _ in fp(10) }.isEmpty)
        // Grown meanwhile: the wait starts again.
        #expect(s.settle(now: t0 + .seconds(3)) { _ in fp(20) }.isEmpty)
        #expect(s.nextDeadline() == t0 + .seconds(6))
        #expect(s.settle(now: t0 + .seconds(6)) { _ in fp(20, mtime: 2) }.isEmpty, "a new mtime is a change too")
        let settled = s.settle(now: t0 + .seconds(9)) { _ in fp(20, mtime: 2) }
        #expect(settled == [Settler.Settled(path: a, fingerprint: fp(20, mtime: 2), noticedBy: .event)])
        #expect(s.count == 0 && s.nextDeadline() == nil)
    }

    @Test("another close restarts the wait; a file that vanished is forgotten; a rename keeps waiting")
    func restartsAndRenames() {
        var s = Settler(window: .seconds(3))
        let t0 = clock.now
        s.touch(a, fp(1), noticedBy: .scan, now: t0)
        s.touch(b, fp(1), noticedBy: .event, now: t0)
        s.touch(a, fp(1), noticedBy: .event, now: t0 + .seconds(2))
        #expect(s.settle(now: t0 + .seconds(3)) { $0 == b ? nil : fp(1) }.isEmpty)
        #expect(!s.isPending(b))
        s.move(LocalPath("/c"), to: LocalPath("/d"), now: t0 + .seconds(4))
        #expect(s.settle(now: t0 + .seconds(5)) { _ in fp(1) }.isEmpty)
        #expect(s.settle(now: t0 + .seconds(7)) { _ in fp(1) }.map(\.path) == [LocalPath("/d/a.jpg")])
    }

    @Test("a postponed file waits until its own deadline, beside others in the window; a touch ends the longer wait")
    func postponed() {
        var s = Settler(window: .seconds(3))
        let t0 = clock.now
        s.postpone(a, fp(1), noticedBy: .event, until: t0 + .seconds(600))
        s.touch(b, fp(1), noticedBy: .event, now: t0)
        #expect(s.nextDeadline() == t0 + .seconds(3))
        #expect(s.settle(now: t0 + .seconds(3)) { _ in fp(1) }.map(\.path) == [b])
        #expect(s.isPending(a) && s.nextDeadline() == t0 + .seconds(600))
        #expect(s.settle(now: t0 + .seconds(599)) { _ in fp(1) }.isEmpty)
        #expect(s.settle(now: t0 + .seconds(600)) { _ in fp(1) }.map(\.path) == [a])
        #expect(s.count == 0 && s.nextDeadline() == nil)

        s.postpone(a, fp(1), noticedBy: .event, until: t0 + .seconds(1200))
        s.touch(a, fp(2), noticedBy: .event, now: t0 + .seconds(601))
        #expect(s.nextDeadline() == t0 + .seconds(604))
        #expect(s.settle(now: t0 + .seconds(604)) { _ in fp(2) }.map(\.fingerprint) == [fp(2)])
        #expect(s.nextDeadline() == nil, "the longer wait ended with the touch")
    }
}

@Suite("Watch tree bookkeeping")
struct WatchTreeTests {
    @Test("a renamed folder takes its subfolders along; a descriptor seen under a new path moves")
    func moves() {
        var t = WatchTree()
        t.insert(1, for: LocalPath("/r"))
        t.insert(2, for: LocalPath("/r/a"))
        t.insert(3, for: LocalPath("/r/a/b"))
        t.insert(4, for: LocalPath("/r/ab"))
        t.move(LocalPath("/r/a"), to: LocalPath("/r/z"))
        #expect(t.folder(of: 3) == LocalPath("/r/z/b"))
        #expect(t.folder(of: 4) == LocalPath("/r/ab"))
        #expect(t.watch(of: LocalPath("/r/a")) == nil)
        t.insert(4, for: LocalPath("/r/ab2"))
        #expect(t.watch(of: LocalPath("/r/ab")) == nil && t.folder(of: 4) == LocalPath("/r/ab2"))
        #expect(Set(t.watches(under: LocalPath("/r/z"))) == [2, 3])
    }

    @Test("a folder renamed over another takes its path; the replaced folder's descriptor stands for nothing")
    func renamedOverAnother() {
        var t = WatchTree()
        t.insert(1, for: LocalPath("/r/a"))
        t.insert(2, for: LocalPath("/r/b"))
        t.insert(3, for: LocalPath("/r/b/c"))
        t.move(LocalPath("/r/b"), to: LocalPath("/r/a"))
        #expect(t.folder(of: 1) == nil)
        #expect(t.watch(of: LocalPath("/r/a")) == 2 && t.folder(of: 3) == LocalPath("/r/a/c"))
        #expect(t.count == 2)
    }

    @Test("paths within a folder")
    func within() {
        #expect(LocalPath("/a/b").isWithin(LocalPath("/a")))
        #expect(!LocalPath("/ab").isWithin(LocalPath("/a")))
        #expect(LocalPath("/a/b/c").relative(to: LocalPath("/a")) == LocalPath("b/c"))
    }
}

@Suite("Names that are never candidates")
struct IgnoredNamesTests {
    @Test("temporary, backup and hidden names", arguments: [
        ".hidden.jpg", "IMG.jpg.part", "IMG.JPG.PART", "a.tmp", "movie.mp4.crdownload", "x.jpg~", "#x.jpg#", "~$doc.docx",
        ".thumbnails", "video.mp4.partial", "f.filepart", "",
    ])
    func ignored(name: String) { #expect(IgnoredNames.isIgnored(Array(name.utf8))) }

    @Test("ordinary names", arguments: ["IMG_0001.jpg", "part.jpg", "tmp", "a~b.jpg", "Holiday 2024.mov"])
    func kept(name: String) { #expect(!IgnoredNames.isIgnored(Array(name.utf8))) }
}

@Suite("inotify records")
struct InotifyEventTests {
    @Test("records are split with their names; one cut short ends the list")
    func parse() {
        func record(_ wd: Int32, _ mask: UInt32, _ name: String?) -> [UInt8] {
            var padded: [UInt8] = []
            if let name { padded = Array(name.utf8) + [0] }
            while padded.count % 4 != 0 { padded.append(0) }
            var out: [UInt8] = withUnsafeBytes(of: wd) { Array($0) }
            out += withUnsafeBytes(of: mask) { Array($0) }
            out += [0, 0, 0, 0]
            out += withUnsafeBytes(of: UInt32(padded.count)) { Array($0) }
            return out + padded
        }
        let bytes = record(1, 8, "IMG.jpg") + record(2, 0x4000, nil) + Array(record(3, 8, "cut").dropLast(2))
        let events = bytes.withUnsafeBytes { InotifyEvent.parse($0) }
        #expect(events.count == 2)
        #expect(events[0].name == Array("IMG.jpg".utf8) && events[0].mask.contains(.closeWrite))
        #expect(events[1].name == nil && events[1].mask.contains(.queueOverflow))
    }
}
