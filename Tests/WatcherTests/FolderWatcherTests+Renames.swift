import Foundation
import Platform
import Testing
import TestSupport
@testable import Watcher

extension FolderWatcherTests {
    @Test("a rename inside the folder is a move, reported at once, never a new file")
    func renameIsAMove() throws {
        // A settle window no test outlives: only the rename itself can explain a report.
        let w = WatchRecorder(settle: .seconds(3600))
        try Files.makeFolder(w.path("Album"))
        try Files.write(w.path("a.jpg"), Files.photo(1))
        try Files.write(w.path("Album/b.jpg"), Files.photo(2))
        for name in ["a.jpg", "Album/b.jpg"] {
            w.taken.insert(try FileFingerprint.of(LocalPath(w.path(name))), at: LocalPath(w.path(name)))
        }
        try w.start()
        try Files.rename(w.path("a.jpg"), w.path("renamed.jpg"))
        try Files.rename(w.path("Album"), w.path("Album 2024"))
        try w.waitFor("two moves") { _ in w.moves.count >= 2 }
        let moves = w.moves.map { "\($0.0.relative(to: LocalPath(w.root)).text) -> \($0.1.relative(to: LocalPath(w.root)).text) \($0.2)" }
        #expect(moves == ["a.jpg -> renamed.jpg false", "Album -> Album 2024 true"])
        #expect(w.found.isEmpty)
        #expect(w.taken.status(of: try FileFingerprint.of(LocalPath(w.path("Album 2024/b.jpg"))), at: LocalPath(w.path("Album 2024/b.jpg"))) == .taken)
    }

    @Test("two taken photos swap names in one step (mv --exchange): the swap is reported, each record follows its file, neither is new")
    func swappedNames() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.root)
        try w.start()
        try Files.write(w.path("a.jpg"), Files.photo(1))
        try Files.write(w.path("b.jpg"), Files.photo(2))
        try w.waitForFound(2)
        try Renames.exchange(w.path("a.jpg"), w.path("b.jpg"))
        try w.waitFor("the swap") { _ in !w.swaps.isEmpty }
        try w.scanAndSettle()
        #expect(w.found.count == 2, "neither is taken again: \(w.foundNames)")
        #expect(w.moves.isEmpty, "told as a swap, not as two renames")
        for name in ["a.jpg", "b.jpg"] { #expect(try w.isTaken(name), "\(name)") }
    }

    @Test("two taken photos swap names while nobody watches: the next walk tells the swap, and takes neither again")
    func swappedNamesUnwatched() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.root)
        try w.takenBeforeStart(["a.jpg", "b.jpg"])
        try Renames.exchange(w.path("a.jpg"), w.path("b.jpg"))
        try w.start()
        try w.waitFor("the swap") { _ in !w.swaps.isEmpty }
        try w.scanAndSettle()
        #expect(w.found.isEmpty, "\(w.foundNames)")
        #expect(w.moves.isEmpty)
        for name in ["a.jpg", "b.jpg"] { #expect(try w.isTaken(name), "\(name)") }
    }

    @Test("two folders swap names in one step, each holding a taken photo of the same name: the swap is reported, every record follows its file, and both folders are still watched where they are now")
    func swappedFolders() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.path("Trip"))
        try Files.makeFolder(w.path("Home"))
        try w.start()
        try Files.write(w.path("Trip/IMG_1.jpg"), Files.photo(1))
        try Files.write(w.path("Home/IMG_1.jpg"), Files.photo(2))
        try w.waitForFound(2)
        try Renames.exchange(w.path("Trip"), w.path("Home"))
        try w.waitFor("the swap") { _ in !w.swaps.isEmpty }
        try Files.write(w.path("Trip/IMG_2.jpg"), Files.photo(3))
        try w.waitForFound(3)
        try w.scanAndSettle()
        #expect(w.found.count == 3, "only the new photo is new: \(w.foundNames)")
        #expect(w.found.last?.path == LocalPath(w.path("Trip/IMG_2.jpg")), "found where it is")
        #expect(w.moves.isEmpty, "told as a swap, not as two renames")
        for name in ["Trip/IMG_1.jpg", "Home/IMG_1.jpg", "Trip/IMG_2.jpg"] { #expect(try w.isTaken(name), "\(name)") }
    }

    @Test("a taken photo and a folder holding one swap names in one step (either named first): the swap is reported, every record follows its file, and the folder is still watched where it is now",
          arguments: [true, false])
    func swappedFileAndFolder(_ fileFirst: Bool) throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.path("Trip"))
        try w.start()
        try Files.write(w.path("cover.jpg"), Files.photo(1))
        try Files.write(w.path("Trip/IMG_1.jpg"), Files.photo(2))
        try w.waitForFound(2)
        if fileFirst {
            try Renames.exchange(w.path("cover.jpg"), w.path("Trip"))
        } else {
            try Renames.exchange(w.path("Trip"), w.path("cover.jpg"))
        }
        try w.waitFor("the swap") { _ in !w.swaps.isEmpty || !w.moves.isEmpty }
        // The folder is now at cover.jpg, the photo at Trip.
        try Files.write(w.path("cover.jpg/IMG_2.jpg"), Files.photo(3))
        try w.waitForFound(3)
        try w.scanAndSettle()
        #expect(w.found.count == 3, "only the new photo is new: \(w.foundNames)")
        #expect(w.found.last?.path == LocalPath(w.path("cover.jpg/IMG_2.jpg")), "found where it is")
        #expect(w.swaps.count == 1 && w.moves.isEmpty, "told as a swap, not as two renames: \(w.moves)")
        for name in ["Trip", "cover.jpg/IMG_1.jpg", "cover.jpg/IMG_2.jpg"] { #expect(try w.isTaken(name), "\(name)") }
    }

    @Test("a folder renamed while the photos in it that settled together are being taken: each is found under the new name, without a scan")
    func folderRenamedWhileItsPhotosAreTaken() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.path("Import"))
        try w.start()
        w.foundGate.close()
        for i in 1...10 { try Files.write(w.path("Import/IMG_\(i).jpg"), Files.photo(i)) }
        try w.waitFor("the first photo of the batch taken") { _ in w.foundGate.isHolding }
        try Files.rename(w.path("Import"), w.path("Trip"))
        w.foundGate.open()
        try w.waitForFound(10, timeout: 15)
        let names = w.foundNames
        #expect(names.count == 10 && names.filter { $0.hasPrefix("Trip/") }.count == 9, "\(names)")
    }

    @Test("a photo moved in from outside and its folder renamed before the watcher reads of either: it is found under the folder's new name, without a scan")
    func movedInThenItsFolderRenamed() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        let outside = TemporaryFolder("iu-outside")
        try Files.makeFolder(w.path("Inbox"))
        try w.start()
        try Files.write(outside.path + "/p.jpg", Files.photo(1))
        try w.holdWithAPhoto(Files.photo(2))
        try Files.rename(outside.path + "/p.jpg", w.path("Inbox/p.jpg"))
        try Files.rename(w.path("Inbox"), w.path("Sorted"))
        w.gate.open()
        try w.waitForFound(2, timeout: 15)
        #expect(w.foundNames == ["Sorted/p.jpg", "first.jpg"])
    }

    @Test("a folder made, renamed, and made again at its first name before the watcher reads of it: both are watched where they are")
    func folderNameUsedAgain() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.root)
        try w.start()
        try w.holdWithAPhoto(Files.photo(1))
        try Files.makeFolder(w.path("New"))
        try Files.rename(w.path("New"), w.path("Trip"))
        try Files.makeFolder(w.path("New"))
        w.gate.open()
        try w.waitForFound(1)
        usleep(300_000)
        try Files.write(w.path("Trip/a.jpg"), Files.photo(2))
        try Files.write(w.path("New/b.jpg"), Files.photo(3))
        try w.waitForFound(3, timeout: 15)
        #expect(w.foundNames == ["New/b.jpg", "Trip/a.jpg", "first.jpg"])
    }

    @Test("two new photos still settling swap names: each is found once, under the name it has, as it is")
    func swappedWhileBothSettle() throws {
        // A settle window long enough that a busy machine still swaps them while both wait.
        let w = WatchRecorder(settle: .milliseconds(4000))
        try Files.makeFolder(w.root)
        try w.start()
        try Files.write(w.path("a.jpg"), Files.photo(1))
        try Files.write(w.path("b.jpg"), Files.photo(2))
        usleep(300_000)  // both heard, and waiting to settle
        try Renames.exchange(w.path("a.jpg"), w.path("b.jpg"))
        #expect(w.found.isEmpty, "both were to be still settling when they swapped; the machine took longer than the window")
        try w.waitForFound(2, timeout: 15)
        usleep(2_000_000)
        #expect(w.foundNames == ["a.jpg", "b.jpg"])
        for file in w.found { #expect(file.fingerprint == (try FileFingerprint.of(file.path)), "\(file.path.text)") }
    }

    @Test("a taken photo deleted, a new one saved at its name (often given the freed inode) and renamed, before the watcher reads of it: a new photo, not the taken one renamed")
    func deletedThenANewOneRenamed() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.root)
        try w.start()
        try Files.write(w.path("a.jpg"), Files.photo(1))
        try w.waitForFound(1)
        try w.holdWithAPhoto(Files.photo(2))
        let freed = try FileFingerprint.of(LocalPath(w.path("a.jpg"))).inode
        #expect(unlink(w.path("a.jpg")) == 0)
        try Files.write(w.path("a.jpg"), Files.photo(3))
        if try FileFingerprint.of(LocalPath(w.path("a.jpg"))).inode != freed {
            print("note: this file system gave the new photo another inode; the test shows less here")
        }
        try Files.rename(w.path("a.jpg"), w.path("b.jpg"))
        w.gate.open()
        try w.waitForFound(3, timeout: 15)
        #expect(w.moves.isEmpty, "not the taken photo renamed: \(w.moves)")
        #expect(w.foundNames == ["a.jpg", "b.jpg", "first.jpg"])
    }

    @Test("a taken photo written again and renamed before it settled: the rename is followed, and the edit found as a change of it")
    func editedThenRenamedBeforeItSettled() throws {
        let w = WatchRecorder(settle: .milliseconds(1500))
        try Files.makeFolder(w.root)
        try w.start()
        try Files.write(w.path("a.jpg"), Files.photo(1))
        try w.waitForFound(1)
        try Files.write(w.path("a.jpg"), Files.photo(2), append: true)
        usleep(300_000)  // the write heard, and waiting to settle
        try Files.rename(w.path("a.jpg"), w.path("b.jpg"))
        try w.waitForFound(2, timeout: 15)
        #expect(w.moves.map { "\($0.0.lastComponent.text) -> \($0.1.lastComponent.text)" } == ["a.jpg -> b.jpg"])
        #expect(w.found.last?.path == LocalPath(w.path("b.jpg")))
    }

    @Test("a new photo still settling swaps names with a taken one: it is taken once, under its new name; the taken one is not taken again")
    func swappedWithANewOne() throws {
        let w = WatchRecorder(settle: .milliseconds(1500))
        try Files.makeFolder(w.root)
        try w.start()
        try Files.write(w.path("b.jpg"), Files.photo(1))
        try w.waitForFound(1)
        try Files.write(w.path("a.jpg"), Files.photo(2))
        // The one that moves first is the new one; the one left at its name is the taken one.
        try Renames.exchange(w.path("a.jpg"), w.path("b.jpg"))
        try w.waitForFound(2)
        try w.scanAndSettle()
        #expect(w.found.count == 2, "\(w.foundNames)")
        #expect(w.found.last?.path == LocalPath(w.path("b.jpg")))
        #expect(w.found.last?.fingerprint == (try FileFingerprint.of(LocalPath(w.path("b.jpg")))))
        #expect(w.swaps.count == 1 && w.moves.isEmpty, "told as a swap")
        for name in ["a.jpg", "b.jpg"] { #expect(try w.isTaken(name), "\(name)") }
    }

    /// The scene of the two tests below: taken photos a.jpg and b.jpg, b.jpg renamed over
    /// a.jpg while nobody watches, and a new b.jpg saved; then the watcher starts.
    private func renamedOverAnother() throws -> WatchRecorder {
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.root)
        try w.takenBeforeStart(["a.jpg", "b.jpg"])
        // On ext4 the new b.jpg is given the inode the rename freed, a.jpg's: the case. Where
        // it is not, the tests hold all the same.
        try Files.rename(w.path("b.jpg"), w.path("a.jpg"))
        // Another size than a.jpg's: in the same inode, with the same size and a modification
        // time the kernel rounded to the same tick, it would be a.jpg by every mark a
        // fingerprint has, and look like a swap.
        try Files.write(w.path("b.jpg"), Files.photo(30))
        try w.start()
        return w
    }

    @Test("a taken photo renamed over another while nobody watches, and a new photo saved at its old name (often given the inode the rename freed): a rename and a new photo, not a swap")
    func renamedOverAnotherAndANewOne() throws {
        let w = try renamedOverAnother()
        try w.waitForFound(1)
        try w.scanAndSettle()
        #expect(w.swaps.isEmpty, "not a swap")
        #expect(w.foundNames == ["b.jpg"], "the new photo is new")
        #expect(w.found.first?.fingerprint == (try FileFingerprint.of(LocalPath(w.path("b.jpg")))))
        #expect(try w.isTaken("a.jpg"), "the renamed one is known where it is")
    }

    @Test("as above, with the renamed photo still settling when the new one has: the new one waits for it, and only the new one is taken")
    func renamedOverAnotherStillSettling() throws {
        let w = try renamedOverAnother()
        // a.jpg opened for writing and closed unchanged, again and again: each close starts
        // its wait anew (as a slow walk noticing it late would), while b.jpg settles.
        for _ in 0..<12 {
            let fd = open(w.path("a.jpg"), O_WRONLY)
            #expect(fd >= 0)
            close(fd)
            usleep(100_000)
        }
        try w.waitForFound(1)
        try w.scanAndSettle()
        #expect(w.foundNames == ["b.jpg"], "the renamed one is not new")
        #expect(w.moves.map { "\($0.0.lastComponent.text) -> \($0.1.lastComponent.text)" } == ["b.jpg -> a.jpg"])
        for name in ["a.jpg", "b.jpg"] { #expect(try w.isTaken(name), "\(name)") }
    }

    @Test("a taken photo renamed while nobody watches, and a new photo saved at its old name that the walk reaches first: the rename is followed before the new one is taken, and the renamed one is not taken again")
    func renamedAndANewOneAtItsNameFirst() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.root)
        // Sizes apart, so that no file can pass for another by its size and time alone.
        try w.takenBeforeStart(["a.jpg", "b.jpg"], photos: [1, 22])
        try Files.rename(w.path("a.jpg"), w.path("b.jpg"))
        try Files.write(w.path("a.jpg"), Files.photo(333))
        try w.start()
        try w.waitForFound(1)
        try w.scanAndSettle()
        #expect(w.foundNames == ["a.jpg"], "only the new photo is new")
        #expect(w.moves.map { "\($0.0.lastComponent.text) -> \($0.1.lastComponent.text)" } == ["a.jpg -> b.jpg"])
        #expect(w.swaps.isEmpty, "not a swap")
        for name in ["a.jpg", "b.jpg"] { #expect(try w.isTaken(name), "\(name)") }
    }

    @Test("two taken photos swap names through a third name, half done when the first walk looks (a -> t, b -> a; then t -> b): neither is taken again")
    func swappedThroughAThirdNameDuringTheWalk() throws {
        let w = WatchRecorder(settle: .milliseconds(1500))
        try Files.makeFolder(w.root)
        try w.takenBeforeStart(["a.jpg", "b.jpg"])
        try Files.rename(w.path("a.jpg"), w.path("t.jpg"))
        try Files.rename(w.path("b.jpg"), w.path("a.jpg"))
        try w.start()
        try Files.rename(w.path("t.jpg"), w.path("b.jpg"))
        // Waits out what the first walk saw as well.
        try w.scanAndSettle()
        #expect(w.found.isEmpty, "\(w.foundNames)")
        for name in ["a.jpg", "b.jpg"] { #expect(try w.isTaken(name), "\(name)") }
    }

    @Test("a photo moved out and another moved in at its name at once: the one moved in is taken")
    func movedOutAndAnotherIn() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        let outside = TemporaryFolder("iu-outside")
        try Files.makeFolder(w.root)
        try w.start()
        try Files.write(w.path("IMG_1.jpg"), Files.photo(1))
        try w.waitForFound(1)
        try Files.write(outside.path + "/other.jpg", Files.photo(2))
        // Within one pairing window: the move out is known to be one only after the move in.
        try Files.rename(w.path("IMG_1.jpg"), outside.path + "/IMG_1.jpg")
        try Files.rename(outside.path + "/other.jpg", w.path("IMG_1.jpg"))
        try w.waitForFound(2)
        #expect(w.found.last?.fingerprint == (try FileFingerprint.of(LocalPath(w.path("IMG_1.jpg")))))
    }

    @Test("a folder moved out and another moved in at its name at once: the one moved in is watched, its photos taken")
    func folderMovedOutAndAnotherIn() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        let outside = TemporaryFolder("iu-outside")
        try Files.makeFolder(w.path("Trip"))
        try Files.makeFolder(outside.path + "/Other")
        try Files.write(outside.path + "/Other/a.jpg", Files.photo(1))
        try w.start()
        try Files.rename(w.path("Trip"), outside.path + "/Trip")
        try Files.rename(outside.path + "/Other", w.path("Trip"))
        try w.waitForFound(1)
        usleep(300_000)  // past the pairing window of the move out
        try Files.write(w.path("Trip/b.jpg"), Files.photo(2))
        try w.waitForFound(2)
        #expect(w.foundNames == ["Trip/a.jpg", "Trip/b.jpg"])
    }

    @Test("a folder moved out and a photo moved in at its name at once: the photo is taken")
    func folderMovedOutAndPhotoIn() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        let outside = TemporaryFolder("iu-outside")
        try Files.makeFolder(w.path("IMG_1.jpg"))
        try Files.write(outside.path + "/IMG_1.jpg", Files.photo(1))
        try w.start()
        try Files.rename(w.path("IMG_1.jpg"), outside.path + "/folder")
        try Files.rename(outside.path + "/IMG_1.jpg", w.path("IMG_1.jpg"))
        try w.waitForFound(1)
        #expect(w.foundNames == ["IMG_1.jpg"])
    }

    @Test("a renamed folder is still watched under its new name")
    func renamedFolderKeepsWatching() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.path("Old/Inner"))
        try w.start()
        try Files.rename(w.path("Old"), w.path("New"))
        try w.waitFor("the folder move") { _ in !w.moves.isEmpty }
        try Files.write(w.path("New/Inner/c.jpg"), Files.photo(3))
        try w.waitForFound(1)
        #expect(w.foundNames == ["New/Inner/c.jpg"])
        #expect(w.found.first?.noticedBy == .event)
    }

    @Test("a file renamed while it settles is taken once, under its last name")
    func renameWhileSettling() throws {
        let w = WatchRecorder(settle: .seconds(2))
        try Files.makeFolder(w.root)
        try w.start()
        try Files.write(w.path("IMG_1.jpg"), Files.photo(1))
        try Files.rename(w.path("IMG_1.jpg"), w.path("Holiday.jpg"))
        try w.waitForFound(1)
        try w.scanAndSettle()
        #expect(w.foundNames == ["Holiday.jpg"])
        #expect(w.moves.isEmpty)
    }

    @Test("a file moved within the folder while nobody watched is a move at the next scan, not a new file")
    func moveSeenByScan() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.path("2024"))
        try Files.write(w.path("a.jpg"), Files.photo(1))
        let fingerprint = try FileFingerprint.of(LocalPath(w.path("a.jpg")))
        w.taken.insert(fingerprint, at: LocalPath(w.path("a.jpg")))
        try Files.rename(w.path("a.jpg"), w.path("2024/a.jpg"))
        try w.start()
        try w.waitFor("the move") { _ in !w.moves.isEmpty }
        #expect(w.moves.first.map { $0.1 } == LocalPath(w.path("2024/a.jpg")))
        #expect(w.found.isEmpty)
    }
}

extension FolderWatcherTests {
    @Test("a folder made and renamed before the watcher heard it made is watched and scanned under its new name")
    func folderRenamedBeforeItsCreate() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.root)
        try w.start()
        // The watcher's thread is held in the handler, so the folder's IN_CREATE waits in the
        // queue until the folder is renamed: no watch can be placed on it at its first name.
        try w.holdWithAPhoto(Files.photo(1))
        try Files.makeFolder(w.path("Import"))
        try Files.write(w.path("Import/a.jpg"), Files.photo(2))
        try Files.rename(w.path("Import"), w.path("Trip"))
        w.gate.open()
        // Written before the folder had a watch: only a scan of the folder finds it.
        try w.waitForFound(2, timeout: 10)
        try Files.write(w.path("Trip/b.jpg"), Files.photo(3))
        try w.waitForFound(3, timeout: 10)
        #expect(w.foundNames == ["Trip/a.jpg", "Trip/b.jpg", "first.jpg"])
        #expect(w.found.last?.noticedBy == .event)
    }

    @Test("a taken photo renamed and written again before the watcher reads the rename: the rename is followed, and the edit found under the new name")
    func renamedThenEditedBeforeRead() throws {
        let w = WatchRecorder(settle: .milliseconds(300))
        try Files.makeFolder(w.root)
        try Files.write(w.path("a.jpg"), Files.photo(1))
        w.taken.insert(try FileFingerprint.of(LocalPath(w.path("a.jpg"))), at: LocalPath(w.path("a.jpg")))
        try w.start()
        // Held in its handler, the watcher reads the rename only after the edit.
        try w.holdWithAPhoto(Files.photo(2))
        try Files.rename(w.path("a.jpg"), w.path("b.jpg"))
        try Files.write(w.path("b.jpg"), Files.photo(3), append: true)
        w.gate.open()
        try w.waitForFound(2)
        let moves = w.moves.map { "\($0.0.lastComponent.text) -> \($0.1.lastComponent.text)" }
        #expect(moves == ["a.jpg -> b.jpg"])
        #expect(w.foundNames == ["b.jpg", "first.jpg"])
        #expect(w.found.first { $0.path.lastComponent.text == "b.jpg" }?.fingerprint == (try FileFingerprint.of(LocalPath(w.path("b.jpg")))))
    }

    @Test("a photo written into a watched folder that is renamed before the watcher reads the write is found under the folder's new name")
    func writtenThenFolderRenamed() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.path("Import/Day 1"))
        try w.start()
        try w.waitFor("the folders watched") { _ in w.watcher.status.watchedFolders >= 3 }
        // The watcher's thread is held in the handler, so the photo's events wait in the
        // queue until its folder has been renamed twice: its first name leads nowhere then.
        try w.holdWithAPhoto(Files.photo(1))
        try Files.write(w.path("Import/Day 1/a.jpg"), Files.photo(2))
        try Files.rename(w.path("Import"), w.path("Trip"))
        try Files.rename(w.path("Trip/Day 1"), w.path("Trip/Monday"))
        w.gate.open()
        try w.waitForFound(2, timeout: 10)
        #expect(w.foundNames == ["Trip/Monday/a.jpg", "first.jpg"])
    }

    @Test("a folder renamed over an empty one keeps the files settling in it")
    func folderRenamedOverAnother() throws {
        let w = WatchRecorder(settle: .seconds(2))
        try Files.makeFolder(w.path("Inbox"))
        try Files.makeFolder(w.path("Import"))
        try w.start()
        try Files.write(w.path("Import/a.jpg"), Files.photo(1))
        try w.waitFor("the photo settling") { _ in w.watcher.status.settling == 1 }
        // The kernel ends the replaced Inbox's watch (IN_IGNORED) after the rename's events,
        // while the photo still settles under its new name.
        try Files.rename(w.path("Import"), w.path("Inbox"))
        try w.waitForFound(1, timeout: 10)
        #expect(w.foundNames == ["Inbox/a.jpg"])
    }
}
