/// Pictures or videos: what a watch rule chooses between.
public enum MediaKind: String, Sendable, Equatable, Codable {
    case picture, video
}

/// A file format recognised by its first bytes (or, for camera RAW formats without a
/// signature of their own, by name).
public enum MediaFormat: String, Sendable, Equatable, Codable {
    case jpeg, heif, avif, png, webp, gif
    /// TIFF and the camera RAW formats built on it: DNG, CR2, NEF, ARW, ORF, RW2, PEF, SRW...
    case tiffRaw = "tiff_raw"
    case cr3, raf, crw
    /// A camera RAW known only by its extension (X3F, 3FR, MRW, ...).
    case rawByName = "raw_by_name"
    case mp4, quickTime = "quicktime", threeGPP = "3gpp", matroska, webm, avi, mpegTS = "mpeg_ts"

    public var kind: MediaKind {
        switch self {
        case .jpeg, .heif, .avif, .png, .webp, .gif, .tiffRaw, .cr3, .raf, .crw, .rawByName: .picture
        case .mp4, .quickTime, .threeGPP, .matroska, .webm, .avi, .mpegTS: .video
        }
    }
}

/// Which kinds a rule takes. Neither flag set means both.
public struct MediaSelection: Sendable, Equatable, Codable {
    public private(set) var pictures: Bool
    public private(set) var videos: Bool

    public init(pictures: Bool, videos: Bool) {
        // "Neither" is how a person says "no filter".
        self.pictures = pictures || !videos
        self.videos = videos || !pictures
    }

    public static let all = MediaSelection(pictures: true, videos: true)

    public func includes(_ kind: MediaKind) -> Bool {
        switch kind {
        case .picture: pictures
        case .video: videos
        }
    }
}
