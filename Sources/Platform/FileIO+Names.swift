import CSystem
import Glibc

/// Making, moving and removing names in folders, checked: each call either did what it says
/// or throws `SystemError` with the errno and the path. Paths are `LocalPath`s (bytes), so a
/// name that is not UTF-8 is handled like any other.
extension FileIO {
    /// A second name for the file at `existing` (link(2)): fails with `EEXIST` when `new` is
    /// taken, never replacing it. `EPERM` (vfat, exFAT, most FUSE and CIFS mounts) or
    /// `EOPNOTSUPP` where the file system has no hard links.
    public static func link(_ existing: LocalPath, to new: LocalPath) throws(SystemError) {
        try valueOrErrno("link", path: new.display) {
            existing.withCString { from in new.withCString { to in Glibc.link(from, to) } }
        }
    }

    /// Moves `from` to `to` only if nothing is at `to` (renameat2 with `RENAME_NOREPLACE`),
    /// in one step: `EEXIST` when `to` is taken. `EINVAL` (or `ENOSYS`) where the file system
    /// cannot promise that, e.g. a FUSE mount whose library predates it.
    public static func renameNoReplace(_ from: LocalPath, to: LocalPath) throws(SystemError) {
        try valueOrErrno("rename", path: to.display) {
            from.withCString { f in to.withCString { t in csystem_rename_noreplace(f, t) } }
        }
    }

    /// Moves `from` to `to` only if nothing is at `to` (`EEXIST` when taken), in one step
    /// where the file system offers one: a rename that refuses to replace, else a second name
    /// made with link(2), which refuses a taken name too, and the first removed (a kill in
    /// between leaves both names). Where it offers neither, the rename's `EINVAL` or `ENOSYS`.
    public static func moveNoReplace(_ from: LocalPath, to: LocalPath) throws(SystemError) {
        do throws(SystemError) {
            try renameNoReplace(from, to: to)
            return
        } catch where [EINVAL, ENOSYS, EOPNOTSUPP].contains(error.errno) {
            do throws(SystemError) {
                try link(from, to: to)
            } catch where [EPERM, EOPNOTSUPP, ENOSYS, EMLINK].contains(error.errno) {
                throw SystemError("rename", errno: EINVAL, path: to.display)
            }
        }
        try unlink(from, ifPresent: true)
    }

    /// rename(2): replaces whatever is at `to`. Only for names that are this program's own.
    public static func rename(_ from: LocalPath, to: LocalPath) throws(SystemError) {
        try valueOrErrno("rename", path: to.display) {
            from.withCString { f in to.withCString { t in Glibc.rename(f, t) } }
        }
    }

    /// Removes the name `path` (unlink(2)). With `ifPresent`, a name that is already gone is
    /// no error; the result says whether one was removed.
    @discardableResult
    public static func unlink(_ path: LocalPath, ifPresent: Bool = false) throws(SystemError) -> Bool {
        do throws(SystemError) {
            try valueOrErrno("unlink", path: path.display) { path.withCString { Glibc.unlink($0) } }
            return true
        } catch {
            if ifPresent && error.errno == ENOENT { return false }
            throw error
        }
    }

    /// Whether anything has the name `path`: a file, a folder, or a link, dangling or not
    /// (lstat(2), where `exists` follows links).
    public static func nameExists(_ path: LocalPath) -> Bool {
        var st = Glibc.stat()
        return path.withCString { lstat($0, &st) } == 0
    }
}
