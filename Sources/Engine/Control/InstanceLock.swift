import Glibc
import Platform

/// One agent per user: an exclusive `flock` on a file in the runtime folder, held for the
/// agent's life and released by the kernel however it dies.
public final class InstanceLock {
    let fd: Int32

    public struct AlreadyRunning: Error, CustomStringConvertible {
        public var pid: String
        public var description: String {
            "another instant-upload agent is already running for this user" + (pid.isEmpty ? "" : " (pid \(pid))")
                + "\n  stop it first (`systemctl --user stop instant-upload` or kill \(pid.isEmpty ? "it" : pid)), or leave it: it serves the same queue"
        }
    }

    /// The lock file is not a plain file of this user's (a link planted in its place).
    public struct NotALockFile: Error, CustomStringConvertible {
        public var path: String
        public var description: String {
            "the agent's lock file \(path) is not a plain file of yours (a symbolic link or someone else's file)\n  remove it (rm \"\(path)\") and start the agent again"
        }
    }

    public init(path: String) throws {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        try PrivateFolder.prepare(folder, role: .runtime)
        // Never through a link: the lock is truncated and written.
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if opened < 0 && errno == ELOOP { throw NotALockFile(path: path) }
        fd = try valueOrErrno("open", path: path) { opened }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid() else {
            Glibc.close(fd)
            throw NotALockFile(path: path)
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = pread(fd, &buffer, buffer.count, 0)
            let pid = n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self).trimmingWhitespace() : ""
            Glibc.close(fd)
            throw AlreadyRunning(pid: pid.allSatisfy(\.isNumber) ? pid : "")
        }
        ftruncate(fd, 0)
        let text = "\(getpid())\n"
        _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    deinit { Glibc.close(fd) }
}
