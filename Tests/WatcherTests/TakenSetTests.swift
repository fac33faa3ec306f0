import Platform
import Testing
@testable import Watcher

@Suite("The memory of taken files")
struct TakenSetTests {
    let path = LocalPath("/c/a.jpg")
    let fingerprint = FileFingerprint(device: 1, inode: 2, size: 3, mtimeNanoseconds: 4)

    @Test("known by fingerprint, anywhere; by path when only device and inode changed")
    func lookups() {
        let set = TakenSet()
        set.insert(fingerprint, at: path)
        #expect(set.status(of: fingerprint, at: path) == .taken)
        #expect(set.status(of: fingerprint, at: LocalPath("/c/b.jpg")) == .takenAt(path))
        var remounted = fingerprint
        remounted.device = 9
        remounted.inode = 99
        #expect(set.status(of: remounted, at: path) == .taken, "the same card mounted again")
        var changed = fingerprint
        changed.mtimeNanoseconds = 5
        #expect(set.status(of: changed, at: path) == .new, "the same name with new contents")
        set.move(LocalPath("/c"), to: LocalPath("/d"))
        #expect(set.status(of: fingerprint, at: LocalPath("/d/a.jpg")) == .taken)
        #expect(set.status(of: fingerprint, at: LocalPath("/c/a.jpg")) == .takenAt(LocalPath("/d/a.jpg")))
        #expect(set.identity(takenAt: LocalPath("/c/a.jpg")) == nil)
    }

    @Test("paths are kept byte for byte: names that are not UTF-8, with newlines, at the root, relative")
    func oddPaths() {
        let paths = [LocalPath(bytes: Array("/c/".utf8) + [0xFF, 0xFE, 0x0A] + Array(".jpg".utf8)), LocalPath("/a.jpg"),
                     LocalPath("relative.jpg"), LocalPath("/c/sub dir/with\nnewline.jpg")]
        let set = TakenSet()
        for (i, p) in paths.enumerated() { set.insert(FileFingerprint(device: 1, inode: UInt64(i), size: 1, mtimeNanoseconds: 1), at: p) }
        for (i, p) in paths.enumerated() {
            let fingerprint = FileFingerprint(device: 1, inode: UInt64(i), size: 1, mtimeNanoseconds: 1)
            #expect(set.status(of: fingerprint, at: p) == .taken)
            #expect(set.status(of: fingerprint, at: LocalPath("/elsewhere")) == .takenAt(p))
            #expect(set.identity(takenAt: p) == FileIdentity(device: 1, inode: UInt64(i)))
        }
        #expect(set.count == 4)
    }

    @Test("a folder renamed onto one it remembers: its files join, each replacing the one of its name")
    func folderOntoFolder() {
        let set = TakenSet()
        func fp(_ inode: UInt64) -> FileFingerprint { FileFingerprint(device: 1, inode: inode, size: Int64(inode), mtimeNanoseconds: 1) }
        set.insert(fp(1), at: LocalPath("/r/a/x.jpg"))
        set.insert(fp(2), at: LocalPath("/r/a/deep/y.jpg"))
        set.insert(fp(3), at: LocalPath("/r/b/x.jpg"))
        set.insert(fp(4), at: LocalPath("/r/b/z.jpg"))
        set.move(LocalPath("/r/a"), to: LocalPath("/r/b"))
        #expect(set.status(of: fp(1), at: LocalPath("/r/b/x.jpg")) == .taken)
        #expect(set.status(of: fp(2), at: LocalPath("/r/b/deep/y.jpg")) == .taken)
        #expect(set.status(of: fp(3), at: LocalPath("/r/b/x.jpg")) == .new, "replaced by the file moved over it")
        #expect(set.status(of: fp(4), at: LocalPath("/r/b/z.jpg")) == .taken)
        #expect(set.identity(takenAt: LocalPath("/r/a/x.jpg")) == nil)
        #expect(set.count == 3)
    }

    @Test("names let go are given back, and what stays is still found")
    func compaction() {
        let set = TakenSet()
        func entry(_ i: Int) -> (FileFingerprint, LocalPath) {
            (FileFingerprint(device: 1, inode: UInt64(i), size: Int64(i), mtimeNanoseconds: 7),
             LocalPath("/pictures/\(i % 7)/a-rather-long-file-name-\(i).jpg"))
        }
        for i in 0..<10_000 { set.insert(entry(i).0, at: entry(i).1) }
        for i in 0..<10_000 where i % 10 != 0 { set.remove(entry(i).1) }
        set.move(LocalPath("/pictures/3"), to: LocalPath("/pictures/three"))
        #expect(set.count == 1_000)
        for i in 0..<10_000 {
            let (fingerprint, path) = entry(i)
            let now = i % 7 == 3 ? LocalPath("/pictures/three/a-rather-long-file-name-\(i).jpg") : path
            #expect(set.status(of: fingerprint, at: now) == (i % 10 == 0 ? .taken : .new), "\(now.display)")
        }
    }

    /// The set against a plain model of what it must answer, over random runs of takes,
    /// forgets and renames of files and folders in a small tree, with hard links.
    @Test("answers as a plain model does, over random takes, forgets and renames", arguments: 0..<20)
    func model(seed: UInt64) {
        var random = SplitMix(seed: seed)
        let folders = ["/r", "/r/a", "/r/a/b", "/r/c", "/r/c/b", "/s"]
        let names = ["x.jpg", "y.jpg", "b", "z z.mov"]
        func anyPath() -> LocalPath { LocalPath(folders[random.below(folders.count)] + "/" + names[random.below(names.count)]) }
        func anyFingerprint() -> FileFingerprint {
            FileFingerprint(device: UInt64(random.below(2)), inode: UInt64(random.below(5)), size: Int64(random.below(2)), mtimeNanoseconds: 1)
        }
        // Names let go are stored anew after a few bytes, so that runs do it often.
        let set = TakenSet(compactNamesFrom: 8)
        var model = Model()
        for step in 0..<400 {
            switch random.below(10) {
            case 0..<5:
                let (fingerprint, path) = (anyFingerprint(), anyPath())
                set.insert(fingerprint, at: path)
                model.insert(fingerprint, at: path)
            case 5..<7:
                let path = anyPath()
                set.remove(path)
                model.remove(path)
            default:
                let pool = random.below(2) == 0 ? folders.map { LocalPath($0) } : (0..<6).map { _ in anyPath() }
                let (old, new) = (pool[random.below(pool.count)], pool[random.below(pool.count)])
                // A rename never puts a folder inside itself or onto one around it.
                guard !new.isWithin(old), !old.isWithin(new) else { continue }
                set.move(old, to: new)
                model.move(old, to: new)
            }
            for _ in 0..<8 {
                let (fingerprint, path) = (anyFingerprint(), anyPath())
                #expect(set.status(of: fingerprint, at: path) == model.status(of: fingerprint, at: path), "seed \(seed), step \(step)")
                #expect(set.identity(takenAt: path) == model.entries[path].map { FileIdentity(device: $0.device, inode: $0.inode) })
            }
            #expect(set.count == model.entries.count)
        }
    }

    /// What the set must answer, in dictionaries.
    struct Model {
        var entries: [LocalPath: FileFingerprint] = [:]
        /// The path found by a fingerprint: the last taken or moved of those that have it.
        var owner: [FileFingerprint: LocalPath] = [:]

        mutating func insert(_ fingerprint: FileFingerprint, at path: LocalPath) {
            if let old = entries[path], owner[old] == path { owner[old] = nil }
            entries[path] = fingerprint
            owner[fingerprint] = path
        }

        mutating func remove(_ path: LocalPath) {
            guard let old = entries.removeValue(forKey: path) else { return }
            if owner[old] == path { owner[old] = nil }
        }

        mutating func move(_ old: LocalPath, to new: LocalPath) {
            if let fingerprint = entries[old], old != new {
                remove(new)
                entries[old] = nil
                entries[new] = fingerprint
                owner[fingerprint] = new
            }
            let moving = entries.keys.filter { $0 != old && $0.isWithin(old) }
            for path in moving where !moving.contains(path.moved(from: old, to: new)) { remove(path.moved(from: old, to: new)) }
            let moved = moving.map { ($0, entries.removeValue(forKey: $0)!) }
            for (path, fingerprint) in moved { entries[path.moved(from: old, to: new)] = fingerprint }
            for (fingerprint, path) in owner where path != old && path.isWithin(old) { owner[fingerprint] = path.moved(from: old, to: new) }
        }

        func status(of fingerprint: FileFingerprint, at path: LocalPath) -> TakenStatus {
            if let known = owner[fingerprint] { return known == path ? .taken : .takenAt(known) }
            if let known = entries[path], known.size == fingerprint.size, known.mtimeNanoseconds == fingerprint.mtimeNanoseconds { return .taken }
            return .new
        }
    }

    /// A small generator with a seed, so that a failing run can be run again.
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }
}
