/// Pictures or videos: what a watch rule chooses between.
public enum MediaKind: String, Sendable, Equatable, Codable {
    case picture, video
}

/// A file format recognised by its first bytes (or, for camera RAW formats without a
/// signature of their own, by name).
public enum MediaFormat: String, Sendable, Equatable, Codable {
    case jpeg, heif, avif, png, webp, gif, bmp, jpegXL = "jpeg_xl"
    /// TIFF and the camera RAW formats built on it: DNG, CR2, NEF, ARW, ORF, RW2, PEF, SRW...
    case tiffRaw = "tiff_raw"
    case cr3, raf, crw
    /// A camera RAW known only by its extension (X3F, 3FR, MRW, ...).
    case rawByName = "raw_by_name"
    case mp4, quickTime = "quicktime", threeGPP = "3gpp", matroska, webm, avi, mpegTS = "mpeg_ts"
    /// MPEG program streams: older cameras' `.MPG`, camcorders' `.MOD` and `.TOD`, DVDs' `.VOB`.
    case mpegPS = "mpeg_ps"
    /// Windows Media (`.WMV`, `.ASF`), as some older cameras and phones recorded.
    case asf

    public var kind: MediaKind {
        switch self {
        case .jpeg, .heif, .avif, .png, .webp, .gif, .bmp, .jpegXL, .tiffRaw, .cr3, .raf, .crw, .rawByName: .picture
        case .mp4, .quickTime, .threeGPP, .matroska, .webm, .avi, .mpegTS, .mpegPS, .asf: .video
        }
    }
}
