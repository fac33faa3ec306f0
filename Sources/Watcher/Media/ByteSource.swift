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
