import Glibc
import Platform

/// Random access to the bytes of a file or a buffer, for the media readers.
///
/// The readers ask for small pieces at offsets taken from the file itself, so every
/// request is bounded by the caller and a source never hands out more than was asked.
public protocol ByteSource {
    /// The length in bytes.
    var count: UInt64 { get }
    /// Up to `length` bytes at `offset`: fewer at the end, none past it or on a read error.
    func bytes(at offset: UInt64, length: Int) -> [UInt8]
}

/// Bytes already in memory: what the tests and a fuzzer hand to the readers.
public struct MemoryBytes: ByteSource, Sendable {
    public let storage: [UInt8]
    public init(_ storage: [UInt8]) { self.storage = storage }

    public var count: UInt64 { UInt64(storage.count) }

    public func bytes(at offset: UInt64, length: Int) -> [UInt8] {
        guard length > 0, offset < count else { return [] }
        let start = Int(offset)
        return Array(storage[start..<(start + min(length, storage.count - start))])
    }
}

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

/// A source that stops answering after a fixed number of requests or bytes, so no input,
/// however it is built, makes the readers read a file without end.
final class BudgetedSource: ByteSource {
    private let base: any ByteSource
    private var requestsLeft: Int
    private var bytesLeft: Int

    init(_ base: any ByteSource, requests: Int = 256, bytes: Int = 4 << 20) {
        self.base = base
        self.requestsLeft = requests
        self.bytesLeft = bytes
    }

    var count: UInt64 { base.count }
    var isExhausted: Bool { requestsLeft <= 0 || bytesLeft <= 0 }

    func bytes(at offset: UInt64, length: Int) -> [UInt8] {
        guard requestsLeft > 0, bytesLeft > 0 else { return [] }
        requestsLeft -= 1
        let result = base.bytes(at: offset, length: min(length, bytesLeft))
        bytesLeft -= result.count
        return result
    }
}

/// Big- and little-endian integers read from a byte array, nil instead of a trap when
/// the offset is out of range.
extension Array where Element == UInt8 {
    func uint8(at offset: Int) -> UInt8? {
        offset >= 0 && offset < count ? self[offset] : nil
    }

    func bigEndian(at offset: Int, size: Int) -> UInt64? {
        guard size >= 0, size <= 8, offset >= 0, offset <= count - size else { return nil }
        var value: UInt64 = 0
        for i in 0..<size { value = value << 8 | UInt64(self[offset + i]) }
        return value
    }

    func littleEndian(at offset: Int, size: Int) -> UInt64? {
        guard size >= 0, size <= 8, offset >= 0, offset <= count - size else { return nil }
        var value: UInt64 = 0
        for i in (0..<size).reversed() { value = value << 8 | UInt64(self[offset + i]) }
        return value
    }

    func uint16BE(at offset: Int) -> UInt16? { bigEndian(at: offset, size: 2).map { UInt16($0) } }
    func uint32BE(at offset: Int) -> UInt32? { bigEndian(at: offset, size: 4).map { UInt32($0) } }
    func uint64BE(at offset: Int) -> UInt64? { bigEndian(at: offset, size: 8) }
    func uint32LE(at offset: Int) -> UInt32? { littleEndian(at: offset, size: 4).map { UInt32($0) } }

    /// Whether the bytes at `offset` are `prefix`.
    func has(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
        guard offset >= 0, offset <= count - prefix.count else { return false }
        return self[offset..<(offset + prefix.count)].elementsEqual(prefix)
    }

    func has(_ ascii: String, at offset: Int = 0) -> Bool { has(Array(ascii.utf8), at: offset) }

    /// The bytes in `start..<start+length`, clipped to the array.
    func slice(_ start: Int, _ length: Int) -> [UInt8] {
        guard start >= 0, start < count, length > 0 else { return [] }
        return Array(self[start..<(start + Swift.min(length, count - start))])
    }
}
