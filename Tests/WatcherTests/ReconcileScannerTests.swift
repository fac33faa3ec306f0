import CSystem
import Foundation
import Glibc
import Platform
import Synchronization
import Testing
import TestSupport
@testable import Watcher

@Suite("The reconcile scan")
struct ReconcileScannerTests {
    func scan(_ root: String, taken: TakenSet = TakenSet()) -> (files: [String], summary: ReconcileScanner.Summary) {
        var files: [String] = []
        let summary = ReconcileScanner(root: LocalPath(root)).scan(
            isKnown: { taken.status(of: $0, at: $1) == .taken },
            onNew: { files.append($0.path.relative(to: LocalPath(root)).text) })
        return (files.sorted(), summary)
    }

    @Test("yields only the regular files the caller does not know")
    func onlyNew() throws {
        let tree = TemporaryFolder("iu-scan")
        let taken = TakenSet()
        for i in 0..<2000 {
            let path = try tree.file("d\(i % 10)/f\(i).jpg", bytes: [UInt8(i % 256)])
            if i % 2 == 0 { taken.insert(try FileFingerprint.of(LocalPath(path)), at: LocalPath(path)) }
        }
        let (files, summary) = scan(tree.path, taken: taken)
        #expect(files.count == 1000)
        #expect(files.allSatisfy { Int($0.split(separator: "f").last!.dropLast(4))! % 2 == 1 })
        #expect(summary.files == 2000 && summary.newFiles == 1000 && summary.folders == 11)
    }

    @Test("names that are not UTF-8 come through as their bytes")
    func oddNames() throws {
        let tree = TemporaryFolder("iu-scan")
        let name = Array("caf".utf8) + [0xE9, 0x0A] + Array(".jpg".utf8)
        let path = LocalPath(tree.path).appending(LocalPath(bytes: name))
        close(path.withCString { open($0, O_WRONLY | O_CREAT, 0o644) })
        var found: [LocalPath] = []
        ReconcileScanner(root: LocalPath(tree.path)).scan(isKnown: { _, _ in false }, onNew: { found.append($0.path) })
        #expect(found == [path])
    }

    @Test("symbolic links are not followed, hidden and temporary names are skipped, a folder reached twice is walked once")
    func linksAndHidden() throws {
        let tree = TemporaryFolder("iu-scan")
        let outside = TemporaryFolder("iu-outside")
        try outside.file("elsewhere/x.jpg", bytes: [1])
        try tree.file("real/a.jpg", bytes: [2])
        try tree.file(".thumbnails/t.jpg", bytes: [3])
        try tree.file("b.jpg.part", bytes: [4])
        symlink(outside.path + "/elsewhere", tree.path + "/link-to-folder")
        symlink(tree.path + "/real/a.jpg", tree.path + "/link-to-file.jpg")
        mkfifo(tree.path + "/pipe.jpg", 0o644)
        #expect(scan(tree.path).files == ["real/a.jpg"])
    }

    @Test("a bind mount of a parent inside the tree does not make the walk endless")
    func bindLoop() throws {
        try Root.require("it bind-mounts a folder")
        let tree = TemporaryFolder("iu-scan")
        defer { TestMounts.unmountAll(below: tree.path) }
        try tree.file("a/b.jpg", bytes: [1])
        try Files.makeFolder(tree.path + "/a/loop")
        try Shell.run("/bin/mount", ["--bind", tree.path, tree.path + "/a/loop"])
        let (files, summary) = scan(tree.path)
        #expect(files == ["a/b.jpg"])
        #expect(summary.folders == 2)
    }

    @Test("a folder that cannot be read is reported, and the rest is scanned")
    func unreadableFolder() throws {
        try Root.require("it checks access as another user")
        let tree = TemporaryFolder("iu-scan")
        chmod(tree.path, 0o755)
        try tree.file("open/a.jpg", bytes: [1])
        try tree.file("locked/b.jpg", bytes: [2])
        try tree.file("c.jpg", bytes: [3])
        chmod(tree.path + "/open", 0o755)
        chmod(tree.path + "/locked", 0o700)
        // Root reads everything: look with another user's eyes, on a thread of its own.
        let result = try DedicatedThread.run { () -> ([String], [ReconcileScanner.Problem]) in
            _ = csystem_set_thread_fsuid(65534)
            var found: [String] = []
            let summary = ReconcileScanner(root: LocalPath(tree.path)).scan(isKnown: { _, _ in false }, onNew: {
                found.append($0.path.relative(to: LocalPath(tree.path)).text)
            })
            return (found.sorted(), summary.problems)
        }
        #expect(result.0 == ["c.jpg", "open/a.jpg"])
        #expect(result.1.map(\.path) == [LocalPath(tree.path + "/locked")])
        #expect(result.1.first?.error.errno == EACCES)
        #expect(result.1.first?.description.contains("permission denied") == true)
    }

    @Test("a root that is not there is said, not thrown")
    func missingRoot() {
        let summary = ReconcileScanner(root: LocalPath("/nonexistent/iu-scan")).scan(isKnown: { _, _ in false }, onNew: { _ in })
        #expect(summary.rootError?.errno == ENOENT)
    }
}
