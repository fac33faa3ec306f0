/// Tells pictures and videos apart by their first bytes, not by their names.
///
/// A `.jpg` that is not a JPEG is not a picture; a JPEG named `.bin` is. The name decides
/// only for camera RAW formats that carry no signature of their own.
enum MediaClassifier {
    /// How many leading bytes `classify` looks at.
    static let headerLength = 4096

    static func classify(header: [UInt8], name: [UInt8]) -> MediaFormat? {
        let h = header
        if h.has([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if h.has([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if h.has("GIF87a") || h.has("GIF89a") { return .gif }
        if h.has("RIFF") {
            if h.has("WEBP", at: 8) { return .webp }
            if h.has("AVI ", at: 8) || h.has("AVIX", at: 8) { return .avi }
        }
        if h.has("FUJIFILMCCD-RAW") { return .raf }
        if h.has([0x49, 0x49, 0x1A, 0x00, 0x00, 0x00]) && h.has("HEAPCCDR", at: 6) { return .crw }
        if isTIFF(h) { return .tiffRaw }
        if h.has([0x1A, 0x45, 0xDF, 0xA3]) { return matroska(h, name: name) }
        if let format = isoBaseMedia(h) { return format }
        if isTransportStream(h) { return .mpegTS }
        // A pack header (MPEG-1 or MPEG-2), or a bare MPEG video sequence header.
        if h.has([0x00, 0x00, 0x01, 0xBA]) || h.has([0x00, 0x00, 0x01, 0xB3]) { return .mpegPS }
        if h.has([0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C]) { return .asf }
        // A bare codestream, or the container's signature box.
        if h.has([0xFF, 0x0A]) || h.has([0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jpegXL }
        if isBMP(h) { return .bmp }
        if let ext = Self.extension(of: name), rawExtensions.contains(ext) { return .rawByName }
        return nil
    }

    /// "BM", then a DIB header of one of the sizes Windows and OS/2 wrote: two letters alone
    /// begin too many other files.
    private static func isBMP(_ h: [UInt8]) -> Bool {
        guard h.has("BM"), h.count >= 18 else { return false }
        let dib = UInt32(h[14]) | UInt32(h[15]) << 8 | UInt32(h[16]) << 16 | UInt32(h[17]) << 24
        return [12, 16, 40, 52, 56, 64, 108, 124].contains(dib)
    }

    /// "II*\0" and "MM\0*", and the RAW variants that change the magic number: Olympus
    /// ORF ("IIRO", "IIRS", "MMOR") and Panasonic RW2 ("IIU\0").
    static func isTIFF(_ h: [UInt8]) -> Bool {
        h.has([0x49, 0x49, 0x2A, 0x00]) || h.has([0x4D, 0x4D, 0x00, 0x2A]) || h.has("IIRO") || h.has("IIRS")
            || h.has("MMOR") || h.has([0x49, 0x49, 0x55, 0x00])
    }

    /// EBML: WebM or Matroska by the DocType in the header; audio-only Matroska is not video.
    private static func matroska(_ h: [UInt8], name: [UInt8]) -> MediaFormat? {
        if let ext = Self.extension(of: name), ext == "mka" || ext == "weba" { return nil }
        let webm = Array("webm".utf8)
        for i in 0..<max(0, min(h.count, 64) - webm.count) where h.has(webm, at: i) { return .webm }
        return .matroska
    }

    private static let heifBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs", "mif1", "msf1", "mif2"]
    private static let avifBrands: Set<String> = ["avif", "avis"]
    private static let quickTimeBoxes: Set<String> = ["moov", "mdat", "wide", "free", "skip", "pnot", "pict"]

    /// ISO base media (ftyp): still-image brands first, since an HEIC lists "mif1" and a
    /// video may list "iso*" beside them.
    private static func isoBaseMedia(_ h: [UInt8]) -> MediaFormat? {
        guard h.count >= 12 else { return nil }
        let type = String(decoding: h.slice(4, 4), as: UTF8.self)
        if type != "ftyp" {
            // Old QuickTime files begin with a movie box instead of ftyp.
            if quickTimeBoxes.contains(type), let size = h.uint32BE(at: 0), size >= 8 { return .quickTime }
            return nil
        }
        let size = Int(h.uint32BE(at: 0) ?? 0)
        var brands = [String(decoding: h.slice(8, 4), as: UTF8.self)]
        var offset = 16
        while offset + 4 <= min(size, h.count, 256) {
            brands.append(String(decoding: h.slice(offset, 4), as: UTF8.self))
            offset += 4
        }
        let major = brands[0]
        if major == "crx " { return .cr3 }
        if avifBrands.contains(major) { return .avif }
        if heifBrands.contains(major) { return .heif }
        if major == "qt  " { return .quickTime }
        if major.hasPrefix("3gp") || major.hasPrefix("3g2") { return .threeGPP }
        if brands.contains(where: avifBrands.contains) { return .avif }
        if brands.contains(where: heifBrands.contains), !brands.contains(where: videoBrands.contains) { return .heif }
        if videoBrands.contains(major) || brands.contains(where: videoBrands.contains) { return .mp4 }
        return nil
    }

    private static let videoBrands: Set<String> = [
        "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "M4V ", "M4VH", "M4VP", "MSNV",
        "dash", "f4v ", "mmp4", "XAVC", "CAEP", "NDAS",
    ]

    /// MPEG transport stream (camcorders' .mts/.m2ts): a sync byte every 188 bytes, or
    /// every 192 after a 4-byte timecode.
    private static func isTransportStream(_ h: [UInt8]) -> Bool {
        if h.count >= 188 * 3, [0, 188, 376].allSatisfy({ h[$0] == 0x47 }) { return true }
        if h.count >= 4 + 192 * 3, [4, 196, 388].allSatisfy({ h[$0] == 0x47 }) { return true }
        return false
    }

    /// RAW formats whose files have no signature this classifier checks.
    private static let rawExtensions: Set<String> = ["x3f", "3fr", "mrw", "mos", "kdc", "dcr", "iiq", "erf", "mef", "nrw", "srf", "sr2", "rwl"]

    static func `extension`(of name: [UInt8]) -> String? {
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0, dot < name.count - 1 else { return nil }
        return String(decoding: name[(dot + 1)...], as: UTF8.self).lowercased()
    }
}
