import Foundation

/// Real media files made by hand for the tests: a JPEG with EXIF, an HEIC-style ISO-BMFF
/// with an Exif item, an MP4 and a QuickTime movie with an `mvhd` date, a TIFF-based RAW,
/// PNG, GIF, WebP, Matroska, AVI, and damaged versions of them.
public enum MediaFiles {
    // MARK: - EXIF (a TIFF structure)

    /// One IFD entry: tag, TIFF type (2 ASCII, 3 SHORT, 4 LONG) and the value's bytes.
    public struct Entry {
        public var tag: UInt16
        public var type: UInt16
        public var count: UInt32
        public var value: [UInt8]

        public static func ascii(_ tag: UInt16, _ text: String) -> Entry {
            let bytes = Array(text.utf8) + [0]
            return Entry(tag: tag, type: 2, count: UInt32(bytes.count), value: bytes)
        }
    }

    /// EXIF as a TIFF structure: IFD0 (with `ifd0` entries and a pointer to the EXIF IFD)
    /// and the EXIF IFD with `exif` entries.
    public static func tiff(ifd0: [Entry] = [], exif: [Entry], bigEndian: Bool = false) -> [UInt8] {
        var w = ByteWriter(bigEndian: bigEndian)
        w.bytes(bigEndian ? Array("MM".utf8) : Array("II".utf8))
        w.u16(42)
        w.u32(8)
        let ifd0Entries = ifd0.count + 1
        let ifd0Size = 2 + ifd0Entries * 12 + 4
        let exifOffset = 8 + ifd0Size
        let exifSize = 2 + exif.count * 12 + 4
        let dataOffset = exifOffset + exifSize
        var data: [UInt8] = []
        func writeIFD(_ entries: [Entry], pointer: UInt32?) {
            let all = entries + (pointer.map { p in
                [Entry(tag: 0x8769, type: 4, count: 1, value: ByteWriter.u32(p, bigEndian: bigEndian))]
            } ?? [])
            w.u16(UInt16(all.count))
            for e in all.sorted(by: { $0.tag < $1.tag }) {
                w.u16(e.tag); w.u16(e.type); w.u32(e.count)
                if e.value.count <= 4 {
                    w.bytes(e.value + [UInt8](repeating: 0, count: 4 - e.value.count))
                } else {
                    w.u32(UInt32(dataOffset + data.count))
                    data += e.value
                    if data.count % 2 == 1 { data.append(0) }
                }
            }
            w.u32(0)
        }
        writeIFD(ifd0, pointer: UInt32(exifOffset))
        writeIFD(exif, pointer: nil)
        return w.output + data
    }

    /// EXIF with DateTimeOriginal (`2023:07:14 09:30:00` form) and, if given, OffsetTimeOriginal (`+02:00`).
    public static func exif(dateTimeOriginal: String, offset: String? = nil, bigEndian: Bool = false) -> [UInt8] {
        var entries = [Entry.ascii(0x9003, dateTimeOriginal)]
        if let offset { entries.append(.ascii(0x9011, offset)) }
        return tiff(ifd0: [.ascii(0x010F, "TestCam")], exif: entries, bigEndian: bigEndian)
    }

    // MARK: - JPEG

    /// An 8×8 grey baseline JPEG's tables and scan (everything after the markers we add).
    static let jpegBody: [UInt8] = [
        0xff, 0xdb, 0x00, 0x43, 0x00, 0x10, 0x0b, 0x0c, 0x0e, 0x0c, 0x0a, 0x10, 0x0e, 0x0d, 0x0e, 0x12,
        0x11, 0x10, 0x13, 0x18, 0x28, 0x1a, 0x18, 0x16, 0x16, 0x18, 0x31, 0x23, 0x25, 0x1d, 0x28, 0x3a,
        0x33, 0x3d, 0x3c, 0x39, 0x33, 0x38, 0x37, 0x40, 0x48, 0x5c, 0x4e, 0x40, 0x44, 0x57, 0x45, 0x37,
        0x38, 0x50, 0x6d, 0x51, 0x57, 0x5f, 0x62, 0x67, 0x68, 0x67, 0x3e, 0x4d, 0x71, 0x79, 0x70, 0x64,
        0x78, 0x5c, 0x65, 0x67, 0x63, 0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x08, 0x00, 0x08, 0x01, 0x01,
        0x11, 0x00, 0xff, 0xc4, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xc4, 0x00, 0x14, 0x10, 0x01, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xda,
        0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00, 0x3f, 0xff, 0xd9,
    ]

    /// A JPEG whose APP1 carries `exif` (a TIFF structure); none when nil. A `comment`
    /// segment makes two pictures of the same moment differ in content.
    public static func jpeg(exif: [UInt8]?, jfif: Bool = false, comment: String? = nil) -> [UInt8] {
        var out: [UInt8] = [0xFF, 0xD8]
        if jfif { out += [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0] }
        if let exif {
            let payload = Array("Exif".utf8) + [0, 0] + exif
            out += [0xFF, 0xE1] + ByteWriter.u16(UInt16(payload.count + 2), bigEndian: true) + payload
        }
        if let comment {
            let text = Array(comment.utf8)
            out += [0xFF, 0xFE] + ByteWriter.u16(UInt16(text.count + 2), bigEndian: true) + text
        }
        return out + jpegBody
    }

    /// A JPEG taken at `dateTimeOriginal` (EXIF form), with an offset when given.
    public static func photo(_ dateTimeOriginal: String, offset: String? = nil, comment: String? = nil) -> [UInt8] {
        jpeg(exif: exif(dateTimeOriginal: dateTimeOriginal, offset: offset), comment: comment)
    }

    /// A photo whose compressed image data is `imageBytes` long (no marker in it), as a
    /// camera's is: cut anywhere in that data, the file lacks its end marker.
    public static func photo(_ dateTimeOriginal: String, comment: String? = nil, imageBytes: Int, seed: UInt64 = 1) -> [UInt8] {
        let small = photo(dateTimeOriginal, comment: comment)
        return Array(small.prefix(small.count - 2)) + TestData.bytes(count: imageBytes, seed: seed).map { min($0, 0xFE) } + [0xFF, 0xD9]
    }

    // MARK: - ISO base media (HEIF, MP4, QuickTime)

    public static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        ByteWriter.u32(UInt32(8 + payload.count), bigEndian: true) + Array(type.utf8) + payload
    }

    public static func fullBox(_ type: String, version: UInt8, flags: UInt32 = 0, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version] + Array(ByteWriter.u32(flags, bigEndian: true).dropFirst()) + payload)
    }

    static func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
        box("ftyp", Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) })
    }

    /// An HEIC-style file: ftyp, meta (hdlr, pitm, iinf with an image item and an Exif
    /// item, iloc) and the Exif item's bytes in `mdat`, or in `idat` when `inIdat`.
    /// `ilocVersion` 0, 1 or 2.
    public static func heic(exif: [UInt8], inIdat: Bool = false, ilocVersion: UInt8 = 1) -> [UInt8] {
        let exifItem = ByteWriter.u32(6, bigEndian: true) + Array("Exif".utf8) + [0, 0] + exif
        let image: [UInt8] = Array(repeating: 0x42, count: 64)
        let ftypBox = ftyp("heic", ["mif1", "heic"])
        func infe(_ id: UInt16, _ type: String) -> [UInt8] {
            fullBox("infe", version: 2, ByteWriter.u16(id, bigEndian: true) + [0, 0] + Array(type.utf8) + [0])
        }
        let iinf = fullBox("iinf", version: 0, ByteWriter.u16(2, bigEndian: true) + infe(1, "hvc1") + infe(2, "Exif"))
        func iloc(imageOffset: UInt32, exifOffset: UInt32, exifMethod: UInt8) -> [UInt8] {
            var p: [UInt8] = [0x44, 0x00]  // offset size 4, length size 4, base offset size 0, index size 0
            let wide = ilocVersion == 2
            func id(_ n: UInt32) -> [UInt8] { wide ? ByteWriter.u32(n, bigEndian: true) : ByteWriter.u16(UInt16(n), bigEndian: true) }
            p += wide ? ByteWriter.u32(2, bigEndian: true) : ByteWriter.u16(2, bigEndian: true)
            for (item, offset, length, method) in [(UInt32(1), imageOffset, UInt32(image.count), UInt8(0)),
                                                   (2, exifOffset, UInt32(exifItem.count), exifMethod)] {
                p += id(item)
                if ilocVersion >= 1 { p += [0, method] }
                p += [0, 0]  // data reference index
                p += ByteWriter.u16(1, bigEndian: true)  // one extent
                p += ByteWriter.u32(offset, bigEndian: true) + ByteWriter.u32(length, bigEndian: true)
            }
            return fullBox("iloc", version: ilocVersion, p)
        }
        let hdlr = fullBox("hdlr", version: 0, [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
        let pitm = fullBox("pitm", version: 0, ByteWriter.u16(1, bigEndian: true))
        let idat = inIdat ? box("idat", exifItem) : []
        // The meta box's size does not depend on the offsets written in iloc.
        func meta(_ imageOffset: UInt32, _ exifOffset: UInt32) -> [UInt8] {
            fullBox("meta", version: 0, hdlr + pitm + iinf + iloc(imageOffset: imageOffset, exifOffset: exifOffset,
                                                                     exifMethod: inIdat ? 1 : 0) + idat)
        }
        let metaLength = meta(0, 0).count
        let mdatStart = UInt32(ftypBox.count + metaLength + 8)
        let exifOffset = inIdat ? 0 : mdatStart + UInt32(image.count)
        let mdat = box("mdat", image + (inIdat ? [] : exifItem))
        return ftypBox + meta(mdatStart, exifOffset) + mdat
    }

    /// An MP4 (or QuickTime, `quickTime`) whose movie header says it was made at
    /// `creation` (seconds since 1970 UTC); `version` 0 or 1 of mvhd; the movie box
    /// before or after the media data.
    public static func movie(creation: Int64, version: UInt8 = 0, quickTime: Bool = false, moovFirst: Bool = false,
                             mediaBytes: Int = 256) -> [UInt8] {
        let stamp = UInt64(creation + 2_082_844_800)
        var mvhd: [UInt8]
        if version == 1 {
            mvhd = ByteWriter.u64(stamp) + ByteWriter.u64(stamp) + ByteWriter.u32(1000, bigEndian: true) + ByteWriter.u64(5000)
        } else {
            mvhd = ByteWriter.u32(UInt32(stamp), bigEndian: true) + ByteWriter.u32(UInt32(stamp), bigEndian: true)
                + ByteWriter.u32(1000, bigEndian: true) + ByteWriter.u32(5000, bigEndian: true)
        }
        mvhd += ByteWriter.u32(0x0001_0000, bigEndian: true) + [1, 0] + [UInt8](repeating: 0, count: 10)
        mvhd += [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0]
        mvhd += [UInt8](repeating: 0, count: 24) + ByteWriter.u32(2, bigEndian: true)
        let moov = box("moov", fullBox("mvhd", version: version, mvhd))
        let kind = quickTime ? ftyp("qt  ", ["qt  "]) : ftyp("isom", ["isom", "iso2", "avc1", "mp41"])
        let mdat = box("mdat", TestData.bytes(count: mediaBytes, seed: UInt64(bitPattern: creation)))
        return kind + (moovFirst ? moov + mdat : mdat + moov)
    }

    // MARK: - Other formats

    /// A TIFF-based RAW (what a DNG, CR2, NEF or ARW is at heart) with EXIF dates.
    public static func raw(dateTimeOriginal: String, offset: String? = nil) -> [UInt8] {
        exif(dateTimeOriginal: dateTimeOriginal, offset: offset) + [UInt8](repeating: 0x11, count: 512)
    }

    /// A 1×1 grey PNG.
    public static let png: [UInt8] = {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return ByteWriter.u32(UInt32(data.count), bigEndian: true) + body + ByteWriter.u32(crc32(body), bigEndian: true)
        }
        let ihdr = ByteWriter.u32(1, bigEndian: true) + ByteWriter.u32(1, bigEndian: true) + [8, 0, 0, 0, 0]
        let raw: [UInt8] = [0, 0x80]
        let adler = adler32(raw)
        let zlib: [UInt8] = [0x78, 0x01, 0x01, 0x02, 0x00, 0xFD, 0xFF] + raw + ByteWriter.u32(adler, bigEndian: true)
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", zlib) + chunk("IEND", [])
    }()

    /// A 1×1 GIF.
    public static let gif: [UInt8] = Array("GIF89a".utf8) + [
        0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x2C, 0x00, 0x00,
        0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3B,
    ]

    /// A WebP (extended format) with an EXIF chunk.
    public static func webp(exif: [UInt8]) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            Array(type.utf8) + ByteWriter.u32(UInt32(data.count)) + data + (data.count % 2 == 1 ? [0] : [])
        }
        let vp8x = chunk("VP8X", [0x08, 0, 0, 0] + [0, 0, 0] + [0, 0, 0])
        let body = Array("WEBP".utf8) + vp8x + chunk("EXIF", exif)
        return Array("RIFF".utf8) + ByteWriter.u32(UInt32(body.count)) + body
    }

    /// The start of a Matroska (or WebM) file: its EBML header with the DocType.
    public static func matroska(docType: String) -> [UInt8] {
        let doc = Array(docType.utf8)
        let header: [UInt8] = [0x42, 0x86, 0x81, 0x01, 0x42, 0xF7, 0x81, 0x01, 0x42, 0x82, UInt8(0x80 | doc.count)] + doc
        return [0x1A, 0x45, 0xDF, 0xA3, UInt8(0x80 | header.count)] + header + [0x18, 0x53, 0x80, 0x67, 0x01, 0, 0, 0, 0, 0, 0, 0]
    }

    /// The start of an AVI file.
    public static let avi: [UInt8] = Array("RIFF".utf8) + ByteWriter.u32(4 + 12) + Array("AVI LIST".utf8) + ByteWriter.u32(4) + Array("hdrl".utf8)

    // MARK: - Checksums

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for x in bytes { a = (a + UInt32(x)) % 65521; b = (b + a) % 65521 }
        return b << 16 | a
    }
}

/// Little helper to lay out integers in either byte order.
struct ByteWriter {
    var bigEndian: Bool
    var output: [UInt8] = []

    mutating func bytes(_ b: [UInt8]) { output += b }
    mutating func u16(_ v: UInt16) { output += Self.u16(v, bigEndian: bigEndian) }
    mutating func u32(_ v: UInt32) { output += Self.u32(v, bigEndian: bigEndian) }

    static func u16(_ v: UInt16, bigEndian: Bool = false) -> [UInt8] {
        bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)]
    }

    static func u32(_ v: UInt32, bigEndian: Bool = false) -> [UInt8] {
        let le = (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }
        return bigEndian ? le.reversed() : le
    }

    static func u64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * (7 - $0))) } }
}
