import Glibc
import Platform
import Queue

/// The local file an upload reads: opened once, its version pinned by the fingerprint it
/// had when opened. Every read goes through the one loop in `FileIO`; a file that ends
/// early has changed under us and says so as `source_changed`.
final class SourceFile {
    let path: LocalPath
    let fd: Int32
    let fingerprint: FileFingerprint

    init(_ path: LocalPath) throws {
        let fd = try valueOrErrno("open", path: path.display) { path.withCString { open($0, O_RDONLY | O_CLOEXEC) } }
        do {
            var st = stat()
            try valueOrErrno("fstat", path: path.display) { fstat(fd, &st) }
            guard FileKind.of(mode: st.st_mode) == .regular else {
                throw Classified(Reason(.notAFile, "\(path.display) is not a regular file"))
            }
            fingerprint = try FileFingerprint.of(descriptor: fd)
        } catch {
            close(fd)
            throw error
        }
        self.path = path
        self.fd = fd
    }

    deinit { close(fd) }

    var size: Int64 { fingerprint.size }

    /// True while both the open file and the one at the path are the version opened.
    func isUnchanged() throws -> Bool {
        try FileFingerprint.of(path) == fingerprint && FileFingerprint.of(descriptor: fd) == fingerprint
    }

    /// Seconds since the file was last modified; a time in the future counts as long ago
    /// (someone set it, nobody is writing).
    var stillFor: Double {
        let age = Double(nowMilliseconds()) / 1000 - Double(fingerprint.mtimeNanoseconds) / 1e9
        return age < 0 ? .infinity : age
    }

    /// Fills `buffer` with the bytes at `offset`.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws {
        let n = try FileIO.read(fd, into: buffer, at: offset, path: path.display)
        if n < buffer.count { throw Classified(Reason(.sourceChanged)) }
    }

    /// Hands the bytes [offset, offset + length) to `body` in bounded blocks.
    func readBlocks(from offset: Int64, length: Int64, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        do {
            try FileIO.readBlocks(fd, from: offset, length: length, path: path.display, body)
        } catch let e as SystemError where e.errno == ENODATA {
            throw Classified(Reason(.sourceChanged))
        }
    }
}
