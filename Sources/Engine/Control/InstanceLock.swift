import Foundation
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

    public init(path: String) throws {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        try FileIO.makeDirectory(folder, mode: 0o700)
        fd = try valueOrErrno("open", path: path) { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let pid = (try? FileIO.readSmallFile(path))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            Glibc.close(fd)
            throw AlreadyRunning(pid: pid)
        }
        ftruncate(fd, 0)
        let text = "\(getpid())\n"
        _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    deinit { Glibc.close(fd) }
}
