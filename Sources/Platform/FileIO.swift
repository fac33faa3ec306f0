import Glibc

/// Small file-system helpers over raw syscalls, throwing `SystemError`.
public enum FileIO {
    /// Creates `path` and its parents with `mode`, and tightens the last one to `mode` if it existed.
    /// Tightening only takes away what `mode` does not grant: a folder its owner made stricter
    /// (a `Local Drive` of 0700) keeps that mode.
    public static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws(SystemError) {
        var current = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST { throw SystemError("mkdir", path: current) }
        }
        var st = stat()
        try valueOrErrno("stat", path: path) { stat(path, &st) }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw SystemError("mkdir", errno: ENOTDIR, path: path) }
        let now = st.st_mode & 0o7777
        if now & ~mode != 0, st.st_uid == getuid() {
            try valueOrErrno("chmod", path: path) { chmod(path, now & mode) }
        }
    }

    public static func readSmallFile(_ path: String, limit: Int = 1 << 20) throws(SystemError) -> String {
        let bytes = try readBytes(path, limit: limit)
        return String(decoding: bytes, as: UTF8.self)
    }

    public static func readBytes(_ path: String, limit: Int = 1 << 20) throws(SystemError) -> [UInt8] {
        let file = try OpenFile(LocalPath(path), O_RDONLY)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while out.count < limit {
            let n = try buffer.withUnsafeMutableBytes { b in Result { () throws(SystemError) in try read(file.descriptor, into: b, path: path) } }.get()
            out += buffer[0..<n]
            if n < buffer.count { break }
        }
        try file.close()
        return out
    }

    /// Writes a file atomically (temp file + rename) with the given mode: when this returns,
    /// the bytes are on the disk under `path`; when it throws, `path` is as it was.
    public static func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) throws(SystemError) {
        let temp = LocalPath(path + ".tmp.\(getpid())")
        do throws(SystemError) {
            let file = try OpenFile(temp, O_WRONLY | O_CREAT | O_TRUNC, mode: mode)
            try bytes.withUnsafeBytes { b in Result { () throws(SystemError) in try write(file.descriptor, b, path: temp.display) } }.get()
            // The mode a left-over temporary file had, or the umask, is not the one asked for.
            try valueOrErrno("fchmod", path: temp.display) { fchmod(file.descriptor, mode) }
            try file.sync()
            try file.close()
            try rename(temp, to: LocalPath(path))
        } catch {
            _ = try? unlink(temp, ifPresent: true)
            throw error
        }
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
