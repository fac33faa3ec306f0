import CSystem
import Glibc

/// Whether anybody holds a file open for writing, asked of the kernel itself.
extension FileIO {
    /// What the kernel says about the writers of an open file.
    public enum Writers: Sendable, Equatable {
        /// Nobody has it open for writing now.
        case none
        /// Some process (any, this one included) has it open for writing, or mapped writable.
        case some
        /// The kernel would not say: no leases on this file system (`EINVAL`: NFS, some FUSE
        /// mounts, `fs.leases-enable = 0`), or a file of another user (`EACCES`).
        case unknown(SystemError)
    }

    /// Takes a read lease on `fd` (which must be open read-only) and gives it back at once:
    /// the kernel refuses one with `EAGAIN` while any writer has the file open, which is how
    /// a file still being copied in tells itself from a whole one whose writer paused. The
    /// lease is held for two system calls; a writer opening the file in between waits that
    /// long.
    public static func writers(of fd: Int32, path: LocalPath? = nil) -> Writers {
        do throws(SystemError) {
            try valueOrErrno("fcntl F_SETLEASE", path: path?.display) { csystem_set_lease(fd, F_RDLCK) }
        } catch {
            return error.errno == EAGAIN ? .some : .unknown(error)
        }
        // Giving a lease back cannot fail for a descriptor that holds one.
        _ = csystem_set_lease(fd, F_UNLCK)
        return .none
    }
}
