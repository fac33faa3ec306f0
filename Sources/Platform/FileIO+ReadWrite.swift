import Glibc

/// The one read and write loop over raw descriptors. A signal can interrupt any call and the
/// kernel may move fewer bytes than asked (pipes, network file systems, a file that shrank);
/// every loop in the program goes through here instead of handling that itself.
extension FileIO {
    /// Reads into `buffer` from `offset` (pread) or from the file position when `offset` is
    /// nil, until the buffer is full or the file ends. Returns the bytes read: fewer than
    /// `buffer.count` only at the end of the file.
    @discardableResult
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64? = nil,
                            path: String? = nil) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let want = buffer.count - done
            let n = try valueOrErrno(offset == nil ? "read" : "pread", path: path) {
                if let offset { return pread(fd, base + done, want, off_t(offset + Int64(done))) }
                return Glibc.read(fd, base + done, want)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes all of `bytes` at `offset` (pwrite), or at the file position when `offset` is nil.
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64? = nil,
                             path: String? = nil) throws(SystemError) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let left = bytes.count - done
            let n = try valueOrErrno(offset == nil ? "write" : "pwrite", path: path) {
                if let offset { return pwrite(fd, base + done, left, off_t(offset + Int64(done))) }
                return Glibc.write(fd, base + done, left)
            }
            // write(2) returns 0 only for a zero-length request; never spin on it.
            if n == 0 { throw SystemError(offset == nil ? "write" : "pwrite", errno: EIO, path: path) }
            done += n
        }
    }

    /// Reads `length` bytes from `offset` in blocks of at most `blockSize`, handing each to
    /// `body` in order. Memory stays at one block whatever the length. A file that ends
    /// before `offset + length` throws `SystemError` with `ENODATA`: it changed under us.
    public static func readBlocks(_ fd: Int32, from offset: Int64, length: Int64, blockSize: Int = 1 << 20,
                                  path: String? = nil, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard length > 0 else { return }
        let size = Int(min(Int64(blockSize), length))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
        defer { buffer.deallocate() }
        var done: Int64 = 0
        while done < length {
            let want = Int(min(Int64(size), length - done))
            let n = try read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset + done, path: path)
            if n == 0 { throw SystemError("read", errno: ENODATA, path: path) }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            done += Int64(n)
        }
    }
}
