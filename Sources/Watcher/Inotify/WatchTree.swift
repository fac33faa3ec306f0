import Platform

/// Which folder each watch descriptor of a recursive watch stands for, both ways.
///
/// inotify names a folder by descriptor and reports only the entry's last component, so
/// this map is how an event becomes a path. Kept by the watcher's thread alone.
struct WatchTree {
    private(set) var folders: [Int32: LocalPath] = [:]
    private var watches: [LocalPath: Int32] = [:]

    var count: Int { folders.count }
    var isEmpty: Bool { folders.isEmpty }
    var allWatches: [Int32] { Array(folders.keys) }

    func folder(of wd: Int32) -> LocalPath? { folders[wd] }
    func watch(of folder: LocalPath) -> Int32? { watches[folder] }

    /// Records that `wd` watches `folder`. The kernel hands out one descriptor per folder
    /// (inode), so a descriptor seen before under another path means the folder moved
    /// while its events were lost: the new path wins.
    mutating func insert(_ wd: Int32, for folder: LocalPath) {
        if let old = folders[wd], old != folder { watches[old] = nil }
        if let oldWatch = watches[folder], oldWatch != wd { folders[oldWatch] = nil }
        folders[wd] = folder
        watches[folder] = wd
    }

    @discardableResult
    mutating func remove(_ wd: Int32) -> LocalPath? {
        guard let folder = folders.removeValue(forKey: wd) else { return nil }
        if watches[folder] == wd { watches[folder] = nil }
        return folder
    }

    /// The descriptors of `folder` and of every folder below it.
    func watches(under folder: LocalPath) -> [Int32] {
        folders.compactMap { $0.value.isWithin(folder) ? $0.key : nil }
    }

    /// A folder of the tree was renamed inside it: it and everything below it now live
    /// under `new`. The descriptors stay; the kernel's watches follow the inodes.
    ///
    /// A folder renamed over an empty one replaces it, and the kernel ends the replaced
    /// folder's watch only after the rename's events. Its descriptor is forgotten here:
    /// kept, its late `IN_IGNORED` would be taken for the end of the folder now at `new`,
    /// and what waits to settle there would be dropped.
    mutating func move(_ old: LocalPath, to new: LocalPath) {
        let moving = watches(under: old)
        for wd in watches(under: new) where !moving.contains(wd) { remove(wd) }
        for wd in moving {
            guard let path = folders[wd] else { continue }
            let moved = path.moved(from: old, to: new)
            watches[path] = nil
            folders[wd] = moved
            watches[moved] = wd
        }
    }
}

extension LocalPath {
    /// Whether this path is `folder` or lies below it (`/a/b` is within `/a`, `/ab` is not).
    func isWithin(_ folder: LocalPath) -> Bool {
        guard bytes.count >= folder.bytes.count, bytes.starts(with: folder.bytes) else { return false }
        if bytes.count == folder.bytes.count || folder.bytes.last == UInt8(ascii: "/") { return true }
        return bytes[folder.bytes.count] == UInt8(ascii: "/")
    }

    /// Where this path, which lies within `old`, is once `old` was renamed to `new`.
    func moved(from old: LocalPath, to new: LocalPath) -> LocalPath {
        LocalPath(bytes: new.bytes + bytes.dropFirst(old.bytes.count))
    }

    /// This path relative to `folder`, which it must lie within (`DCIM/IMG_1.jpg`).
    func relative(to folder: LocalPath) -> LocalPath {
        guard isWithin(folder), bytes.count > folder.bytes.count else { return LocalPath(bytes: []) }
        var rest = bytes.dropFirst(folder.bytes.count)
        while rest.first == UInt8(ascii: "/") { rest = rest.dropFirst() }
        return LocalPath(bytes: Array(rest))
    }
}
