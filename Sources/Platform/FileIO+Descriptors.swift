import Glibc

/// The calls on an open descriptor that can fail after the bytes were written, checked. A
/// failed `fsync` or `close` is the only news of bytes the disk did not take (a full or
/// failing device under a loop mount, NFS, FUSE): ignoring it turns a lost file into a
/// "completed" one.
extension FileIO {
    /// open(2) with close-on-exec, retried when a signal interrupts it.
    public static func open(_ path: LocalPath, _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> Int32 {
        try valueOrErrno("open", path: path.display) { path.withCString { Glibc.open($0, flags | O_CLOEXEC, mode) } }
    }

    /// fsync(2): the file's bytes and size are on the disk, or this throws (`EIO`, `ENOSPC`).
    public static func fsync(_ fd: Int32, path: LocalPath? = nil) throws(SystemError) {
        try valueOrErrno("fsync", path: path?.display) { Glibc.fsync(fd) }
    }

    /// ftruncate(2) to `length` bytes; the file position is left where it was.
    public static func truncate(_ fd: Int32, to length: Int64, path: LocalPath? = nil) throws(SystemError) {
        // A file of that length already is left as it is: some file systems refuse even that
        // no-op (fusefat answers `EPERM` to any `ftruncate` that does not shrink), and a
        // resume from a whole `.part`, or emptying an empty one, must not fail on it.
        if Int64(try status(fd, path: path).st_size) == length { return }
        try valueOrErrno("ftruncate", path: path?.display) { ftruncate(fd, off_t(length)) }
    }

    /// fstat(2).
    public static func status(_ fd: Int32, path: LocalPath? = nil) throws(SystemError) -> stat {
        var st = stat()
        try valueOrErrno("fstat", path: path?.display) { fstat(fd, &st) }
        return st
    }

    /// close(2), exactly once: the descriptor is gone whatever this says. `EINTR` is not
    /// retried (Linux has released the descriptor already, and a retry could close a file
    /// another thread just opened) and counts as closed; any other error is thrown.
    public static func close(_ fd: Int32, path: LocalPath? = nil) throws(SystemError) {
        guard Glibc.close(fd) != 0 else { return }
        let e = Glibc.errno
        if e == EINTR { return }
        throw SystemError("close", errno: e, path: path?.display)
    }
}
