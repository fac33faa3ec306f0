import Foundation
import Glibc
import Platform
import Testing
import TestSupport
@testable import Watcher

@Suite("Whether a rule's folder is there to read its files from")
struct FolderPresenceTests {
    /// A folder `card` with a file system of its own mounted on it (`store`, a tmpfs that
    /// keeps its files while `card` is unmounted), and a photo in `card/DCIM`.
    struct FixedMountPoint {
        let base = TemporaryFolder("iu-presence")
        var card: String { base.path + "/my card" }
        var store: String { base.path + "/store" }
        var photo: LocalPath { LocalPath(card + "/DCIM/one.jpg") }
        let device: UInt64

        init() throws {
            try Files.makeFolder(base.path + "/my card")
            try Files.makeFolder(base.path + "/store")
            try TestMounts.mountTmpfs(at: base.path + "/store")
            try Files.makeFolder(base.path + "/store/DCIM")
            try TestMounts.bind(base.path + "/store", at: base.path + "/my card")
            try Files.write(base.path + "/my card/DCIM/one.jpg", Files.photo(1))
            device = try FileFingerprint.of(LocalPath(base.path + "/my card/DCIM/one.jpg")).device
        }

        /// A presence without an fstab entry for the folder, told of the card while it is
        /// mounted (as the rule's watcher does), and the folder.
        func watched() -> (FolderPresence, LocalPath) {
            let presence = FolderPresence(fstab: base.path + "/no-fstab")
            #expect(presence.note(LocalPath(card)) == device, "a new mount point is handed out to be kept")
            #expect(presence.note(LocalPath(card)) == nil, "once")
            return (presence, LocalPath(card))
        }
    }

    @Test("a mount point kept from an earlier run is evidence enough")
    func rememberedMountPoint() throws {
        let m = try FixedMountPoint()
        defer { TestMounts.unmountAll(below: m.base.path) }
        try TestMounts.unmount(m.card)
        let forgetful = FolderPresence(fstab: m.base.path + "/no-fstab")
        #expect(forgetful.fileMissing(m.photo, device: m.device, folder: LocalPath(m.card)) == nil)
        let presence = FolderPresence(fstab: m.base.path + "/no-fstab")
        presence.remember([(LocalPath(m.card), m.device)])
        #expect(presence.fileMissing(m.photo, device: m.device, folder: LocalPath(m.card)) == .unmounted)
    }

    @Test("a folder that does not exist is missing; one that is there is not")
    func missing() throws {
        let base = TemporaryFolder("iu-presence")
        let presence = FolderPresence()
        #expect(presence.absence(of: LocalPath(base.path + "/my card")) == .missing)
        #expect(presence.absence(of: LocalPath(base.path)) == nil)
    }

    @Test("a card unmounted from a fixed mount point is away until it is mounted there again")
    func unmountedAndBack() throws {
        let m = try FixedMountPoint()
        defer { TestMounts.unmountAll(below: m.base.path) }
        let (presence, folder) = m.watched()
        #expect(presence.absence(of: folder) == nil)
        try TestMounts.unmount(m.card)
        // Nothing says so until a file of the card is missed: the folder is an empty one.
        #expect(presence.absence(of: folder) == nil)
        #expect(presence.fileMissing(m.photo, device: m.device, folder: folder) == .unmounted)
        #expect(presence.absence(of: folder) == .unmounted)
        try TestMounts.bind(m.store, at: m.card)
        #expect(presence.absence(of: folder) == nil)
        try TestMounts.unmount(m.card)
        #expect(presence.absence(of: folder) == nil, "the card came back once; it is learned again from a missing file")
        #expect(presence.fileMissing(m.photo, device: m.device, folder: folder) == .unmounted)
        // Something put into the empty folder: it is a folder of its own now.
        try Files.write(m.card + "/note.txt", Files.photo(9))
        #expect(presence.absence(of: folder) == nil)
    }

    @Test("without having seen the card mounted there, an fstab entry for the folder is the evidence")
    func fstabEntry() throws {
        let m = try FixedMountPoint()
        defer { TestMounts.unmountAll(below: m.base.path) }
        let folder = LocalPath(m.card)
        try TestMounts.unmount(m.card)
        let none = FolderPresence(fstab: m.base.path + "/no-fstab")
        #expect(none.fileMissing(m.photo, device: m.device, folder: folder) == nil, "an emptied folder is not a card taken out")
        let escaped = m.card.replacingOccurrences(of: " ", with: "\\040")
        try Files.write(m.base.path + "/fstab", Array("# comment\nUUID=1234-ABCD \(escaped) vfat noauto,user 0 0\n".utf8))
        let listed = FolderPresence(fstab: m.base.path + "/fstab")
        #expect(listed.fileMissing(m.photo, device: m.device, folder: folder) == .unmounted)
    }

    @Test("another card mounted there has files of its own: the folder is there")
    func anotherCard() throws {
        let m = try FixedMountPoint()
        defer { TestMounts.unmountAll(below: m.base.path) }
        let (presence, folder) = m.watched()
        try TestMounts.unmount(m.card)
        #expect(presence.fileMissing(m.photo, device: m.device, folder: folder) == .unmounted)
        try TestMounts.mountTmpfs(at: m.card)
        #expect(presence.absence(of: folder) == nil)
        #expect(presence.fileMissing(m.photo, device: m.device, folder: folder) == nil)
    }

    @Test("a file deleted from a card that is mounted, or from a folder of the card's own file system, is gone", arguments: [
        "deleted from the mounted card", "the folder holds other files", "no device recorded", "the file is not below the folder",
    ])
    func gone(_ what: String) throws {
        let m = try FixedMountPoint()
        defer { TestMounts.unmountAll(below: m.base.path) }
        let (presence, folder) = m.watched()
        var file = m.photo, device: UInt64? = m.device
        switch what {
        case "deleted from the mounted card":
            #expect(unlink(m.photo.text) == 0)
        case "the folder holds other files":
            try TestMounts.unmount(m.card)
            try Files.write(m.card + "/left-behind.txt", Files.photo(2))
        case "no device recorded":
            try TestMounts.unmount(m.card)
            device = nil
        default:
            try TestMounts.unmount(m.card)
            file = LocalPath(m.base.path + "/elsewhere/one.jpg")
        }
        #expect(presence.fileMissing(file, device: device, folder: folder) == nil)
        #expect(presence.absence(of: folder) == nil)
    }
}
