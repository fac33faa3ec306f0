import Glibc
import Platform

/// An open file read with `pread`, never more than asked.
final class FileBytes: ByteSource {
    private let fd: Int32
    private let path: LocalPath
    let count: UInt64
    /// The open file's fingerprint, to tell whether it is still the file that settled.
    let fingerprint: FileFingerprint

    /// Opens a regular file without following a symbolic link and without blocking on a FIFO.
    init(_ path: LocalPath) throws(SystemError) {
        // Read-only, as a read lease needs (`writers`).
        let fd = try FileIO.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        let st: stat
        do throws(SystemError) { st = try FileIO.status(fd, path: path) } catch {
            _ = try? FileIO.close(fd)
            throw error
        }
        guard FileKind.of(mode: st.st_mode) == .regular else {
            _ = try? FileIO.close(fd)
            throw SystemError("open", errno: EINVAL, path: path.display)
        }
        self.fd = fd
        self.path = path
        self.count = UInt64(max(0, st.st_size))
        self.fingerprint = FileFingerprint(st)
    }

    // Read-only: nothing a failed close could lose.
    deinit { _ = try? FileIO.close(fd) }

    /// Whether anybody has the file open for writing now.
    var writers: FileIO.Writers { FileIO.writers(of: fd, path: path) }

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
