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
