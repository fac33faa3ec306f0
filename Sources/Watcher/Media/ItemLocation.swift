/// One item's entry in an `iloc` box.
struct ItemLocation: Equatable {
    struct Extent: Equatable {
        var offset: UInt64
        var length: UInt64
    }

    var constructionMethod: Int
    var baseOffset: UInt64
    var extents: [Extent]

    /// Reads `iloc` (versions 0, 1, 2) up to the entry of `itemID`.
    static func find(_ itemID: UInt32, in iloc: Box, of meta: MemoryBytes) -> ItemLocation? {
        guard iloc.payloadLength <= HEIFExif.maximumMetaLength else { return nil }
        let b = meta.bytes(at: iloc.payloadStart, length: Int(iloc.payloadLength))
        guard let version = b.uint8(at: 0), version <= 2, let sizes = b.uint8(at: 4), let sizes2 = b.uint8(at: 5) else { return nil }
        let offsetSize = Int(sizes >> 4), lengthSize = Int(sizes & 0xF)
        let baseOffsetSize = Int(sizes2 >> 4), indexSize = version == 0 ? 0 : Int(sizes2 & 0xF)
        for size in [offsetSize, lengthSize, baseOffsetSize, indexSize] where ![0, 4, 8].contains(size) { return nil }
        var p = 6
        func read(_ size: Int) -> UInt64? {
            guard let value = b.bigEndian(at: p, size: size) else { return nil }
            p += size
            return value
        }
        guard let itemCount = read(version < 2 ? 2 : 4) else { return nil }
        for _ in 0..<min(itemCount, 65536) {
            guard let id = read(version < 2 ? 2 : 4) else { return nil }
            var method = 0
            if version >= 1 {
                guard let field = read(2) else { return nil }
                method = Int(field & 0xF)
            }
            guard read(2) != nil, let base = read(baseOffsetSize), let extentCount = read(2) else { return nil }
            var extents: [Extent] = []
            for _ in 0..<extentCount {
                if indexSize > 0 { guard read(indexSize) != nil else { return nil } }
                guard let offset = read(offsetSize), let length = read(lengthSize) else { return nil }
                extents.append(Extent(offset: offset, length: length))
            }
            if UInt32(truncatingIfNeeded: id) == itemID, id <= UInt64(UInt32.max) {
                return ItemLocation(constructionMethod: method, baseOffset: base, extents: extents)
            }
        }
        return nil
    }
}
