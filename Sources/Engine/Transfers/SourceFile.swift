import Glibc
import Platform
import Queue

/// The local file an upload reads: opened once, its version pinned by the fingerprint it
/// had when opened. Every read goes through the one loop in `FileIO`; a file that ends
/// early has changed under us and says so as `source_changed`.
///
/// The descriptor is the file: it is read and checked through it alone, so a rename of the
/// file or of any folder above it changes nothing for the bytes. Its name matters only
/// once the file has no link left: deleted (`source_missing`), or replaced by another file
/// under the same name, the way editors save (a change).
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

    /// How the open file stands now against the version opened.
    enum Standing: Equatable {
        case unchanged
        /// Written to, or replaced under its name by another file.
        case changed
        /// Deleted: no name leads to it any more, and nothing took its place.
        case gone
    }

    func standing() throws -> Standing {
        var st = stat()
        try valueOrErrno("fstat", path: path.display) { fstat(fd, &st) }
        guard FileFingerprint(st) == fingerprint else { return .changed }
        guard st.st_nlink == 0 else { return .unchanged }
        // Unlinked: a file at the name now is its replacement (a new version); none, it is gone.
        return (try? FileFingerprint.of(path)) == nil ? .gone : .changed
    }

    /// Throws `source_missing` when the file is gone; true while it is the version opened.
    func isUnchanged() throws -> Bool {
        switch try standing() {
        case .unchanged: return true
        case .changed: return false
        case .gone: throw Classified(Reason(.sourceMissing, "\(path.display) was deleted while it was being sent"))
        }
    }

    /// Seconds since the file was last modified; a time in the future counts as long ago
    /// (someone set it, nobody is writing).
    var stillFor: Double {
        let age = Double(nowMilliseconds()) / 1000 - Double(fingerprint.mtimeNanoseconds) / 1e9
        return age < 0 ? .infinity : age
    }

    /// Whether some program holds the file open for writing (see `FileIO.writers`).
    var writers: FileIO.Writers { FileIO.writers(of: fd, path: path) }

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
