import Glibc
import Platform

/// The few operations a download performs on the open file it writes into, through
/// `Platform`'s checked calls; failures are `TransportError.sinkWrite` with the errno, like
/// the sink's own.
enum PartialFile {
    /// Makes the file exactly `offset` bytes long and puts the write position there, so
    /// the next body byte lands at `offset` whatever a broken earlier attempt left behind.
    static func prepare(_ fd: Int32, at offset: Int64) throws(TransportError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { throw failure("the download target", errno) }
        // Read-write because an error page written after `offset` is read back; not
        // O_APPEND because Linux pwrite ignores the offset on such descriptors, and a
        // whole-file answer to a resume must start again at 0.
        precondition(flags & O_ACCMODE == O_RDWR && flags & O_APPEND == 0,
                     "a download target must be opened O_RDWR without O_APPEND")
        let current = try size(fd)
        guard current >= offset else {
            throw TransportError(kind: .sinkWrite,
                                 message: "the partial download holds \(current) bytes, fewer than the \(offset) to resume from",
                                 errno: EINVAL)
        }
        try truncate(fd, to: offset)
    }

    static func size(_ fd: Int32) throws(TransportError) -> Int64 {
        do { return Int64(try FileIO.status(fd).st_size) } catch { throw failure(error) }
    }

    /// Cuts the file to `length` bytes and moves the write position to its end.
    static func truncate(_ fd: Int32, to length: Int64) throws(TransportError) {
        do throws(SystemError) {
            try FileIO.truncate(fd, to: length)
            try valueOrErrno("lseek") { lseek(fd, off_t(length), SEEK_SET) }
        } catch {
            throw failure(error)
        }
    }

    /// Up to `limit` bytes from `offset` (an error body that went into the file).
    static func read(_ fd: Int32, from offset: Int64, limit: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: limit)
        let n = bytes.withUnsafeMutableBytes { (try? FileIO.read(fd, into: $0, at: offset)) ?? 0 }
        return Array(bytes[..<n])
    }

    private static func failure(_ operation: String, _ code: Int32) -> TransportError {
        TransportError(kind: .sinkWrite, message: "\(operation): \(String(cString: strerror(code)))", errno: code)
    }

    private static func failure(_ error: SystemError) -> TransportError { failure(error.operation, error.errno) }
}
