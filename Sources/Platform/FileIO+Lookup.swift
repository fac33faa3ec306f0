import Glibc

/// Looking at names without opening them, checked: `stat`, `lstat`, `realpath`, `mkdir`.
extension FileIO {
    /// stat(2): what `path` leads to, links followed.
    public static func status(_ path: LocalPath) throws(SystemError) -> stat {
        var st = stat()
        try valueOrErrno("stat", path: path.display) { path.withCString { stat($0, &st) } }
        return st
    }

    /// lstat(2): the name itself; a symbolic link is reported as one.
    public static func linkStatus(_ path: LocalPath) throws(SystemError) -> stat {
        var st = stat()
        try valueOrErrno("lstat", path: path.display) { path.withCString { lstat($0, &st) } }
        return st
    }

    /// realpath(3): the absolute path with every link, `.` and `..` resolved. The path must
    /// exist.
    public static func realPath(_ path: LocalPath) throws(SystemError) -> LocalPath {
        guard let resolved = path.withCString({ realpath($0, nil) }) else { throw SystemError("realpath", path: path.display) }
        defer { free(resolved) }
        return LocalPath(cString: resolved)
    }

    /// mkdir(2) of one folder; false (not an error) when something already has the name.
    @discardableResult
    public static func makeFolder(_ path: LocalPath, mode: mode_t) throws(SystemError) -> Bool {
        do throws(SystemError) {
            try valueOrErrno("mkdir", path: path.display) { path.withCString { mkdir($0, mode) } }
            return true
        } catch {
            if error.errno == EEXIST { return false }
            throw error
        }
    }
}
