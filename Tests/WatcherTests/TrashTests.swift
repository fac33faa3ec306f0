import Foundation
import Glibc
import Platform
import Testing
import TestSupport
@testable import Watcher

@Suite("The freedesktop trash", .serialized)
struct TrashTests {
    func trash(_ home: TemporaryFolder) -> Trash {
        Trash(paths: XDGPaths(environment: ["HOME": home.path, "XDG_DATA_HOME": home.path + "/data"]))
    }

    /// The `.trashinfo`'s text, read by its path's bytes (its name may not be UTF-8).
    static func info(_ trashed: Trash.Trashed) throws -> String {
        let fd = trashed.info.withCString { open($0, O_RDONLY) }
        guard fd >= 0 else { throw TestFailure("cannot open \(trashed.info.display)") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
    }

    @Test("a file on the home disk goes to $XDG_DATA_HOME/Trash with its .trashinfo")
    func homeTrash() throws {
        let home = TemporaryFolder("iu-home")
        let file = try home.file("Camera/IMG 1.jpg", bytes: [1, 2, 3])
        let trashed = try trash(home).moveToTrash(LocalPath(file), now: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(trashed.trash == LocalPath(home.path + "/data/Trash"))
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(FileManager.default.contents(atPath: home.path + "/data/Trash/files/IMG 1.jpg") == Data([1, 2, 3]))
        let text = try Self.info(trashed)
        #expect(text.hasPrefix("[Trash Info]\nPath=\(home.path)/Camera/IMG%201.jpg\nDeletionDate="))
        #expect(text.range(of: #"DeletionDate=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\n$"#, options: .regularExpression) != nil)
        var st = stat()
        stat(home.path + "/data/Trash", &st)
        #expect(st.st_mode & 0o777 == 0o700)
    }

    @Test("the same name twice: both kept, under different names")
    func collisions() throws {
        let home = TemporaryFolder("iu-home")
        let t = trash(home)
        let first = try t.moveToTrash(LocalPath(try home.file("a/IMG.jpg", bytes: [1])))
        let second = try t.moveToTrash(LocalPath(try home.file("b/IMG.jpg", bytes: [2])))
        #expect(first.file.lastComponent == LocalPath("IMG.jpg"))
        #expect(second.file.lastComponent == LocalPath("IMG.2.jpg"))
        #expect(second.info.lastComponent == LocalPath("IMG.2.jpg.trashinfo"))
        #expect(try Self.info(second).contains("Path=\(home.path)/b/IMG.jpg\n"))
    }

    @Test("a name that is not UTF-8 is escaped in Path=")
    func oddName() throws {
        let home = TemporaryFolder("iu-home")
        let name = Array("caf".utf8) + [0xE9] + Array("\n.jpg".utf8)
        let path = LocalPath(home.path).appending(LocalPath(bytes: name))
        let fd = path.withCString { open($0, O_WRONLY | O_CREAT, 0o644) }
        close(fd)
        let trashed = try trash(home).moveToTrash(path)
        #expect(try Self.info(trashed).contains("Path=\(home.path)/caf%E9%0A.jpg\n"))
        #expect(trashed.file.lastComponent.bytes == name)
    }

    @Test("a file on another disk goes to that disk's .Trash-$uid, with a path relative to its top")
    func otherDisk() throws {
        let home = TemporaryFolder("iu-home")
        let card = TemporaryFolder("iu-card")
        defer { TestMounts.unmountAll(below: card.path) }
        try TestMounts.mountTmpfs(at: card.path)
        let file = try card.file("DCIM/100/IMG_1.jpg", bytes: [9])
        let trashed = try trash(home).moveToTrash(LocalPath(file))
        #expect(trashed.trash == LocalPath(card.path + "/.Trash-\(getuid())"))
        #expect(try Self.info(trashed).contains("\nPath=DCIM/100/IMG_1.jpg\n"))
        #expect(!FileManager.default.fileExists(atPath: home.path + "/data/Trash/files/IMG_1.jpg"))
    }

    @Test("an administrator's $topdir/.Trash with the sticky bit is used as .Trash/$uid; without it, it is not")
    func sharedTrash() throws {
        let home = TemporaryFolder("iu-home")
        let card = TemporaryFolder("iu-card")
        defer { TestMounts.unmountAll(below: card.path) }
        try TestMounts.mountTmpfs(at: card.path)
        mkdir(card.path + "/.Trash", 0o1777)
        chmod(card.path + "/.Trash", 0o1777)
        let shared = try trash(home).moveToTrash(LocalPath(try card.file("a.jpg", bytes: [1])))
        #expect(shared.trash == LocalPath(card.path + "/.Trash/\(getuid())"))
        chmod(card.path + "/.Trash", 0o777)
        let own = try trash(home).moveToTrash(LocalPath(try card.file("b.jpg", bytes: [2])))
        #expect(own.trash == LocalPath(card.path + "/.Trash-\(getuid())"), "no sticky bit: not trusted")
    }

    @Test("a file that is gone, or a folder, is refused and nothing is written")
    func refusals() throws {
        let home = TemporaryFolder("iu-home")
        #expect(throws: TrashError.self) { try trash(home).moveToTrash(LocalPath(home.path + "/missing.jpg")) }
        try Files.makeFolder(home.path + "/folder")
        #expect { try trash(home).moveToTrash(LocalPath(home.path + "/folder")) } throws: { ($0 as? TrashError)?.code == .notAFile }
        let infos = (try? FileManager.default.contentsOfDirectory(atPath: home.path + "/data/Trash/info")) ?? []
        #expect(infos.isEmpty)
    }
}
