import Glibc
import Platform
import Transport

/// The SHA-256 of a file as it is now, read in bounded blocks.
enum ContentHash {
    /// The hex SHA-256 of the regular file at `path`, if it is still the file `fingerprint`
    /// describes before and after reading; nil when it changed, went away or cannot be read.
    static func sha256(of path: LocalPath, expecting fingerprint: FileFingerprint) -> String? {
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard (try? FileFingerprint.of(descriptor: fd)) == fingerprint else { return nil }
        let sha = RunningSHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n < 0, errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            sha.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        guard (try? FileFingerprint.of(descriptor: fd)) == fingerprint, sha.count == fingerprint.size else { return nil }
        return sha.hexDigest
    }
}
