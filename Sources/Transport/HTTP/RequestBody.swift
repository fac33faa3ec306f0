import Glibc

/// What a request sends.
public enum RequestBody {
    case none
    case bytes([UInt8])
    /// `length` bytes of the open file `descriptor` from `offset`, read with pread straight
    /// into curl's buffer: the file is never held in memory. With a `seal`, the last bytes
    /// go only if everything read matches the checksum the request's head announced.
    case file(descriptor: Int32, offset: Int64, length: Int64, observer: ByteObserver?, seal: BodySeal? = nil)
    /// Bytes the caller holds in memory (a chunk it already read once, e.g. to checksum it),
    /// copied straight into curl's buffer.
    case buffer(UnsafeRawBufferPointer, observer: ByteObserver?)
}

extension RequestBody {
    /// The number of bytes the body sends.
    var length: Int64 {
        switch self {
        case .none: 0
        case .bytes(let b): Int64(b.count)
        case .file(_, _, let length, _, _): length
        case .buffer(let b, _): Int64(b.count)
        }
    }
}
