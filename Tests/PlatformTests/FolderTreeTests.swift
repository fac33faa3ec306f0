import Foundation
import Glibc
import Platform
import Testing
import TestSupport

/// The program's one walk through folders, with each of its two link policies.
@Suite("Walking a folder tree")
struct FolderTreeTests {
    /// What a walk reports, as text relative to `root`, in the order it came.
    func walk(_ root: String, _ links: FolderTree.Links, depth: Int = 64) -> [String] {
        var tree = FolderTree(links: links)
        tree.maximumDepth = depth
        var seen: [String] = []
        let base = LocalPath(root)
        func name(_ path: LocalPath) -> String {
            path == base ? "." : String(decoding: path.bytes.dropFirst(base.bytes.count + 1), as: UTF8.self)
        }
        tree.walk(base) { event in
            switch event {
            case .folder(let path, let depth): seen.append("folder \(name(path)) \(depth)")
            case .entry(let path, _, _): seen.append("entry \(name(path))")
            case .repeated(let path, let first, let loop): seen.append("repeated \(name(path)) as \(name(first))\(loop ? " loop" : "")")
            case .tooDeep(let path): seen.append("too deep \(name(path))")
            case .problem(let path, let error, let isFolder, _): seen.append("problem \(name(path)) \(error.errno) \(isFolder)")
            }
        }
        return seen
    }

    func scene() throws -> TemporaryFolder {
        let tree = TemporaryFolder("iu-tree")
        try tree.file("b/2.jpg", bytes: [2])
        try tree.file("a.jpg", bytes: [1])
        try tree.file("c/d/3.jpg", bytes: [3])
        symlink(tree.path + "/a.jpg", tree.path + "/link.jpg")
        symlink(tree.path + "/c", tree.path + "/b/up")        // a second way into c
        symlink(tree.path, tree.path + "/c/d/top")            // a loop
        symlink(tree.path + "/nowhere", tree.path + "/dangling")
        return tree
    }

    @Test("a person's folder: links are followed, each folder walked once, a loop and a second way named, names in byte order")
    func followed() throws {
        let tree = try scene()
        #expect(walk(tree.path, .followed) == [
            "folder . 0", "entry a.jpg", "folder b 1", "entry b/2.jpg", "folder b/up 2", "folder b/up/d 3", "entry b/up/d/3.jpg",
            "repeated b/up/d/top as . loop", "repeated c as b/up", "problem dangling \(ENOENT) false", "entry link.jpg",
        ])
    }

    @Test("a watched folder: links are left out unlooked at")
    func skipped() throws {
        let tree = try scene()
        #expect(walk(tree.path, .skipped) == [
            "folder . 0", "entry a.jpg", "folder b 1", "entry b/2.jpg", "folder c 1", "folder c/d 2", "entry c/d/3.jpg",
        ])
    }

    @Test("folders below the depth limit are named, not entered; a root that is not there is the root's problem")
    func depthAndRoot() throws {
        let tree = try scene()
        #expect(walk(tree.path, .skipped, depth: 1) == [
            "folder . 0", "entry a.jpg", "folder b 1", "entry b/2.jpg", "folder c 1", "too deep c/d",
        ])
        #expect(walk(tree.path + "/missing", .skipped) == ["problem . \(ENOENT) true"])
    }

    @Test("files by their whole fingerprints: the first found of each, in walk order; one at the name it is known at does not count, and the walk looks on")
    func filesByFingerprint() throws {
        let tree = try scene()
        link(tree.path + "/a.jpg", tree.path + "/c/d/a-again.jpg")   // the same file under a second name
        func relative(_ found: [(path: LocalPath, fingerprint: FileFingerprint)]) -> [String] {
            found.map { String(decoding: $0.path.bytes.dropFirst(tree.path.utf8.count + 1), as: UTF8.self) }
        }
        func fingerprint(_ name: String) throws -> FileFingerprint { try #require(FileFingerprint.ofRegularFile(notFollowing: LocalPath(tree.path + "/" + name))) }
        let (a, two) = (try fingerprint("a.jpg"), try fingerprint("b/2.jpg"))
        var walker = FolderTree(links: .skipped)
        #expect(relative(walker.files(in: LocalPath(tree.path), matching: [a, two])) == ["a.jpg", "b/2.jpg"])
        var again = FolderTree(links: .skipped)
        let elsewhere = again.files(in: LocalPath(tree.path), matching: [a, two]) { path, fingerprint in
            fingerprint == a && path.text == tree.path + "/a.jpg"
        }
        #expect(relative(elsewhere) == ["b/2.jpg", "c/d/a-again.jpg"])
    }
}
