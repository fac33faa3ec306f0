import Glibc

/// Whether a picture or video holds everything its own structure declares.
///
/// A copy interrupted and left under its final name (`rsync --partial` renames its half
/// file into place, `cp` stopped with Ctrl-C leaves it there) is closed and still, and
/// nobody writes it: to the settle window and the kernel it looks whole. Taken, it would be
/// sent cut short, and the whole photo, when the copy is resumed, would go beside it under
/// another name. Its format tells: a JPEG ends with its end-of-image marker, a PNG with its
/// `IEND` chunk, a RIFF file (WebP, AVI) is as long as its header says, and the top-level
/// boxes of an MP4, QuickTime, HEIF or CR3 file add up to the file's length.
///
/// Only what can be read at known places is looked at: the end of the file, the headers of
/// the boxes or chunks (a few reads, checked arithmetic, a bounded walk). Formats it
/// cannot judge cheaply (TIFF-based RAW, MPEG streams, Matroska) are taken as they are.
enum MediaCompleteness {
    /// Why the file ends before its format says it does, in words; nil when it does not,
    /// or when its format gives no cheap way to tell.
    static func cutShort(_ format: MediaFormat, in source: any ByteSource) -> String? {
        switch format {
        case .jpeg: return jpeg(source)
        case .png: return png(source)
        case .webp, .avi: return riff(source)
        case .mp4, .quickTime, .threeGPP, .cr3: return isoBoxes(source) { $0.contains("moov") && $0.contains("mdat") }
        case .heif, .avif:
            // A still image keeps its items in `meta` (its data in `mdat`, or in the meta
            // box's own `idat`, looked for once); an image sequence is a movie (`moov`).
            var idat: Bool?
            return isoBoxes(source) { seen in
                if seen.contains("moov") && seen.contains("mdat") { return true }
                guard seen.contains("meta") else { return false }
                if seen.contains("mdat") { return true }
                if idat == nil { idat = hasIdat(source) }
                return idat!
            }
        case .gif, .bmp, .jpegXL, .tiffRaw, .raf, .crw, .rawByName, .matroska, .webm, .mpegTS, .mpegPS, .asf: return nil
        }
    }

    /// Boxes and chunks walked at most, so that any bytes cost a bounded amount of work.
    static let walkLimit = 100_000
    /// A JPEG's compressed data is searched for its end marker in blocks of this size.
    static let scanBlock = 1 << 20

    /// Ends with the end-of-image marker (`FF D9`), or has one after its image data: some
    /// cameras append data after it (a maker's trailer). A motion photo (its XMP says it
    /// carries a video) must also hold the whole of the video appended after the picture.
    private static func jpeg(_ source: any ByteSource) -> String? {
        // Ending with the marker is taken as whole at once, a motion photo too: one cut at
        // a place that happens to read `FF D9` passes, and one whose video an editor took
        // out (leaving its XMP) does not wait for a video it will never have.
        if source.bytes(at: source.count >= 2 ? source.count - 2 : 0, length: 2) == [0xFF, 0xD9] { return nil }
        // Walk the segments to the start of the image data, then look for the marker there.
        var offset: UInt64 = 2
        var motionPhoto = false
        for _ in 0..<walkLimit {
            let header = source.bytes(at: offset, length: 4)
            guard header.count >= 2 else { return "it ends inside its header segments (a copy interrupted?)" }
            guard header[0] == 0xFF else { return nil }  // not a segment: not this reader's to judge
            let marker = header[1]
            if marker == 0xFF { offset += 1; continue }  // fill byte
            if marker == 0xD9 { return nil }
            if marker == 0x01 || (0xD0...0xD8).contains(marker) { offset += 2; continue }  // no length
            guard let length = header.count >= 4 ? header.uint16BE(at: 2) : nil else {
                return "it ends inside its header segments (a copy interrupted?)"
            }
            let end = offset + 2 + UInt64(length)
            guard end <= source.count else { return "it ends inside its header segments (a copy interrupted?)" }
            if marker == 0xE1, !motionPhoto { motionPhoto = saysMotionPhoto(source, segment: offset + 4, length: Int(length) - 2) }
            if marker == 0xDA {
                // Inside compressed data every `FF` is followed by `00` or a restart marker, so
                // the first `FF D9` there is the image's end.
                guard let image = find([0xFF, 0xD9], in: source, from: end) else { return "it ends before the picture's end marker (a copy interrupted?)" }
                return motionPhoto ? motionPhotoVideo(source, after: image + 2) : nil
            }
            offset = end
        }
        return nil
    }

    /// Whether an APP1 segment is XMP (or a part of extended XMP) that declares a video
    /// appended to the picture: Google's motion photo (`Camera:MotionPhoto`, a `Container`
    /// item `MotionPhoto`) and the older micro video (`MicroVideo`), which Samsung writes too.
    private static func saysMotionPhoto(_ source: any ByteSource, segment start: UInt64, length: Int) -> Bool {
        let kinds = ["http://ns.adobe.com/xap/1.0/\0", "http://ns.adobe.com/xmp/extension/\0"].map { Array($0.utf8) }
        let head = source.bytes(at: start, length: kinds.map(\.count).max()!)
        guard kinds.contains(where: { head.starts(with: $0) }) else { return false }
        let xmp = source.bytes(at: start, length: length)
        return motionPhotoMarks.contains { xmp.contains($0) }
    }

    /// How XMP says a video is appended, as attributes (either quote) or elements.
    private static let motionPhotoMarks: [[UInt8]] = ["MotionPhoto", "MicroVideo"].flatMap { name in
        [name + "=\"1\"", name + "='1'", name + ">1<"]
    }.map { Array($0.utf8) } + [Array(#"Semantic="MotionPhoto""#.utf8), Array("Semantic='MotionPhoto'".utf8)]

    /// The video of a motion photo, after the picture's end marker (and whatever else the
    /// phone put between, a gain map): an MP4 whose boxes are all there. Bytes after it (a
    /// maker's trailer) are allowed, as after any MP4.
    private static func motionPhotoVideo(_ source: any ByteSource, after start: UInt64) -> String? {
        guard let type = find(Array("ftyp".utf8), in: source, from: start + 4) else {
            return "it ends before the motion photo's video (a copy interrupted?)"
        }
        return isoBoxes(source, from: type - 4) { $0.contains("moov") && $0.contains("mdat") }.map { "its video: " + $0 }
    }

    /// The first offset at or after `start` where `needle` occurs, read in blocks.
    private static func find(_ needle: [UInt8], in source: any ByteSource, from start: UInt64) -> UInt64? {
        var offset = start
        while offset < source.count {
            let block = source.bytes(at: offset, length: scanBlock)
            guard block.count >= needle.count else { return nil }
            let found = block.withUnsafeBytes { raw -> Int? in
                let base = raw.baseAddress!, last = raw.count - needle.count
                var at = 0
                while at <= last, let hit = memchr(base + at, Int32(needle[0]), last + 1 - at) {
                    let i = base.distance(to: UnsafeRawPointer(hit))
                    if needle.indices.allSatisfy({ raw[i + $0] == needle[$0] }) { return i }
                    at = i + 1
                }
                return nil
            }
            if let found { return offset + UInt64(found) }
            // The next block starts early enough to find a needle this one cut in two.
            offset += UInt64(block.count - (needle.count - 1))
            if block.count < scanBlock { return nil }
        }
        return nil
    }

    /// Whether the top-level `meta` box holds an `idat` (item data kept in the box itself).
    private static func hasIdat(_ source: any ByteSource) -> Bool {
        let top = ISOBaseMedia.boxes(in: source, from: 0, to: source.count)
        guard let meta = ISOBaseMedia.first("meta", in: top) else { return false }
        return ISOBaseMedia.first("idat", in: ISOBaseMedia.children(of: meta, in: source, skip: 4)) != nil
    }

    /// Chunks (length, type, data, CRC) from byte 8 on, until `IEND`.
    private static func png(_ source: any ByteSource) -> String? {
        let iend: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
        if source.count >= 12, source.bytes(at: source.count - 12, length: 12) == iend { return nil }
        var offset: UInt64 = 8
        for _ in 0..<walkLimit {
            let header = source.bytes(at: offset, length: 8)
            guard header.count == 8, let length = header.uint32BE(at: 0) else {
                return "it ends before the picture's last chunk (a copy interrupted?)"
            }
            if header.slice(4, 4) == [0x49, 0x45, 0x4E, 0x44] {
                return offset + 12 <= source.count ? nil : "it ends inside the picture's last chunk (a copy interrupted?)"
            }
            let end = offset + 12 + UInt64(length)
            guard end <= source.count else { return "it ends inside a chunk of the picture (a copy interrupted?)" }
            offset = end
        }
        return nil
    }

    /// A RIFF file declares its length after `RIFF`: at least that much must be there (an
    /// AVI over 1 GiB has more RIFF lists after the first).
    private static func riff(_ source: any ByteSource) -> String? {
        guard let declared = source.bytes(at: 4, length: 4).uint32LE(at: 0) else { return nil }
        let whole = 8 + UInt64(declared)
        // Some writers count the eight header bytes in, or leave out the last pad byte.
        guard source.count < whole, source.count != UInt64(declared), source.count + 1 != whole else { return nil }
        return "it holds \(source.count) of the \(whole) bytes its header declares (a copy interrupted?)"
    }

    /// The top-level boxes add up to the file's length (the last may run "to the end"), and
    /// those the format cannot do without are there (`complete`): a file cut between two
    /// boxes is a valid list of boxes, but one without its movie or its media data. Bytes
    /// after a complete file that are no box this format knows (a camera maker's trailer)
    /// are not a cut.
    private static func isoBoxes(_ source: any ByteSource, from start: UInt64 = 0, complete: (Set<String>) -> Bool) -> String? {
        var offset = start
        var seen: Set<String> = []
        for _ in 0..<walkLimit {
            guard offset < source.count else {
                return complete(seen) ? nil : "it lacks the boxes its format needs (a copy interrupted?)"
            }
            guard source.count - offset >= 8 else {
                return complete(seen) ? nil : "it ends inside a box header (a copy interrupted?)"
            }
            let header = source.bytes(at: offset, length: 16)
            guard let size32 = header.uint32BE(at: 0) else { return nil }
            let type = String(decoding: header.slice(4, 4).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
            if complete(seen), !knownTopLevel.contains(type) { return nil }  // a trailer
            var size = UInt64(size32), headerLength: UInt64 = 8
            if size32 == 0 { return nil }  // to the end of the file
            if size32 == 1 {
                guard let large = header.uint64BE(at: 8) else { return "it ends inside a box header (a copy interrupted?)" }
                size = large
                headerLength = 16
            }
            guard size >= headerLength else { return nil }  // damaged, not short: not this reader's to judge
            let (end, overflow) = offset.addingReportingOverflow(size)
            guard !overflow else { return nil }  // damaged, not short
            guard end <= source.count else {
                return "its '\(type)' box ends \(end - source.count) bytes past the file's end (a copy interrupted?)"
            }
            seen.insert(type)
            offset = end
        }
        return nil
    }

    /// The boxes ISO base media files (MP4, QuickTime, HEIF, CR3) have at their top level.
    static let knownTopLevel: Set<String> = [
        "ftyp", "styp", "pdin", "moov", "moof", "mfra", "mdat", "free", "skip", "wide", "meta", "meco", "uuid", "udta",
        "sidx", "ssix", "prft", "emsg", "pnot", "PICT", "jP  ",
    ]
}
