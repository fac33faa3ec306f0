import Glibc
import Platform

/// An open file read with `pread`, never more than asked.
final class FileBytes: ByteSource {
    private let fd: Int32
    let count: UInt64
    /// The open file's fingerprint, to tell whether it is still the file that settled.
    let fingerprint: FileFingerprint

    /// Opens a regular file without following a symbolic link and without blocking on a FIFO.
    init(_ path: LocalPath) throws(SystemError) {
        let fd = try valueOrErrno("open", path: path.display) {
            path.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else { let e = SystemError("fstat", path: path.display); close(fd); throw e }
        guard FileKind.of(mode: st.st_mode) == .regular else { close(fd); throw SystemError("open", errno: EINVAL, path: path.display) }
        self.fd = fd
        self.count = UInt64(max(0, st.st_size))
        self.fingerprint = FileFingerprint(st)
    }

    deinit { close(fd) }

    func bytes(at offset: UInt64, length: Int) -> [UInt8] {
        guard length > 0, offset < count, offset <= UInt64(Int64.max) else { return [] }
        let wanted = Int(min(UInt64(length), count - offset))
        var out = [UInt8](repeating: 0, count: wanted)
        var done = 0
        while done < wanted {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, wanted - done, off_t(offset) + off_t(done)) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            done += n
        }
        return Array(out.prefix(done))
    }
}
