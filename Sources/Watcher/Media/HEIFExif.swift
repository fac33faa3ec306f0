/// Finds the Exif item of an HEIF/HEIC/AVIF file: `meta` → `iinf` names the item of type
/// "Exif", `iloc` says where its bytes are (in the file or in `idat`).
enum HEIFExif {
    enum Outcome: Equatable {
        /// The TIFF structure the item holds.
        case exif([UInt8])
        case missing(String)
    }

    /// Metadata larger than this is not read (a real one is a few KiB).
    static let maximumMetaLength: UInt64 = 4 << 20
    static let maximumExifLength = 1 << 20

    static func exifPayload(in source: any ByteSource) -> Outcome {
        let top = ISOBaseMedia.boxes(in: source, from: 0, to: source.count, limit: 64)
        guard let metaBox = ISOBaseMedia.first("meta", in: top) else { return .missing("the HEIF file has no meta box") }
        guard metaBox.payloadLength <= maximumMetaLength else { return .missing("the HEIF meta box is implausibly large") }
        // Read the meta box once and walk it in memory.
        let meta = MemoryBytes(source.bytes(at: metaBox.start, length: Int(metaBox.end - metaBox.start)))
        let metaInMemory = Box(type: "meta", start: 0, payloadStart: metaBox.payloadStart - metaBox.start, end: meta.count)
        let children = ISOBaseMedia.children(of: metaInMemory, in: meta, skip: 4)
        guard let iinf = ISOBaseMedia.first("iinf", in: children) else { return .missing("the HEIF file has no item list (iinf)") }
        guard let itemID = exifItemID(iinf, in: meta) else { return .missing("the HEIF file has no Exif item") }
        guard let iloc = ISOBaseMedia.first("iloc", in: children) else { return .missing("the HEIF file has no item locations (iloc)") }
        guard let location = ItemLocation.find(itemID, in: iloc, of: meta) else { return .missing("the HEIF Exif item has no usable location") }

        var data: [UInt8] = []
        let idat = ISOBaseMedia.first("idat", in: children)
        for extent in location.extents {
            let from: any ByteSource
            var offset: UInt64
            switch location.constructionMethod {
            case 0:
                from = source
                offset = location.baseOffset
            case 1:
                guard let idat else { return .missing("the HEIF Exif item is in an idat box that is not there") }
                from = meta
                offset = idat.payloadStart &+ location.baseOffset
                guard offset >= idat.payloadStart else { return .missing("the HEIF Exif item's location overflows") }
            default:
                return .missing("the HEIF Exif item is stored in a way this reader does not follow")
            }
            let (start, overflow) = offset.addingReportingOverflow(extent.offset)
            guard !overflow, start < from.count else { return .missing("the HEIF Exif item lies outside the file") }
            let room = maximumExifLength - data.count
            // Length 0 means "to the end of the file".
            let length = extent.length == 0 ? UInt64(room) : min(extent.length, UInt64(room))
            data += from.bytes(at: start, length: Int(length))
            if data.count >= maximumExifLength { break }
        }
        // The item starts with the offset from its first byte after this field to the TIFF header.
        guard let headerOffset = data.uint32BE(at: 0) else { return .missing("the HEIF Exif item is empty") }
        let tiffStart = 4 + Int(headerOffset)
        guard headerOffset < UInt32(maximumExifLength), tiffStart < data.count else { return .missing("the HEIF Exif item's header offset is wrong") }
        return .exif(Array(data[tiffStart...]))
    }

    /// The ID of the first item entry (`infe`, version 2 or 3) of type "Exif".
    private static func exifItemID(_ iinf: Box, in meta: MemoryBytes) -> UInt32? {
        guard let version = meta.bytes(at: iinf.payloadStart, length: 1).first else { return nil }
        // The entry count (16 or 32 bits) is not trusted: the boxes are walked instead.
        let skip: UInt64 = version == 0 ? 6 : 8
        for infe in ISOBaseMedia.children(of: iinf, in: meta, skip: skip, limit: 4096) where infe.type == "infe" {
            let body = meta.bytes(at: infe.payloadStart, length: 16)
            guard let entryVersion = body.uint8(at: 0) else { continue }
            switch entryVersion {
            case 2:
                if body.has("Exif", at: 8), let id = body.uint16BE(at: 4) { return UInt32(id) }
            case 3:
                if body.has("Exif", at: 10), let id = body.uint32BE(at: 4) { return id }
            default:
                continue
            }
        }
        return nil
    }
}
