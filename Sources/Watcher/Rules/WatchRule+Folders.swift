import Glibc
import Platform

/// One folder, one rule: rules are compared by where their folders really are.
extension WatchRule {
    /// How one rule's folder stands to another's.
    public enum Overlap: Sendable, Equatable {
        /// The same folder, however it is written (`..`, a symbolic link, a bind mount).
        case same
        /// Inside the other folder, which is watched with everything below it.
        case inside
        /// Around the other folder: it holds it.
        case around
    }

    /// Where `folder` really is: its real path (links, `.` and `..` resolved) when it is
    /// there; otherwise the real path of its nearest existing parent with the rest of it
    /// (`.` and `..` there taken as written).
    public static func realFolder(_ folder: LocalPath) -> LocalPath {
        var existing = folder
        var rest: [LocalPath] = []
        while existing.bytes.count > 1 {
            if let real = try? FileIO.realPath(existing) {
                return rest.reversed().reduce(real) { path, name in
                    switch name.bytes {
                    case Array(".".utf8): path
                    case Array("..".utf8): path.parent
                    default: path.appending(name)
                    }
                }
            }
            rest.append(existing.lastComponent)
            existing = existing.parent
        }
        return folder
    }

    /// How `folder` stands to `other`: the same folder, inside it, around it, or apart
    /// (nil). Compared by real path, and by device and inode for what is there (a bind
    /// mount shows one folder under two real paths).
    public static func overlap(of folder: LocalPath, with other: LocalPath) -> Overlap? {
        let mine = realFolder(folder), theirs = realFolder(other)
        if mine == theirs { return .same }
        if mine.isWithin(theirs) { return .inside }
        if theirs.isWithin(mine) { return .around }
        guard let myID = try? FileIdentity.of(mine), let theirID = try? FileIdentity.of(theirs) else { return nil }
        if myID == theirID { return .same }
        if ancestors(of: mine).contains(theirID) { return .inside }
        if ancestors(of: theirs).contains(myID) { return .around }
        return nil
    }

    /// The identities of the folders above `folder`.
    private static func ancestors(of folder: LocalPath) -> Set<FileIdentity> {
        var found: Set<FileIdentity> = []
        var current = folder.parent
        while current.bytes.count > 1 {
            if let id = try? FileIdentity.of(current) { found.insert(id) }
            current = current.parent
        }
        return found
    }
}
