/// `creation_time` from the movie header (`moov/mvhd`) of an MP4 or QuickTime file.
enum MovieHeader {
    enum Outcome: Equatable {
        case found(unixSeconds: Int64)
        case missing(String)
    }

    /// Seconds from 1904-01-01 (the QuickTime epoch) to 1970-01-01.
    static let epochOffset: UInt64 = 2_082_844_800

    static func creationTime(in source: any ByteSource) -> Outcome {
        // The movie box may come after gigabytes of media data; only box headers are read on the way.
        guard let moov = ISOBaseMedia.first("moov", in: ISOBaseMedia.boxes(in: source, from: 0, to: source.count)) else {
            return .missing("the video has no movie box (moov); it may be cut short")
        }
        guard let mvhd = ISOBaseMedia.first("mvhd", in: ISOBaseMedia.children(of: moov, in: source, limit: 256)) else {
            return .missing("the video's movie box has no header (mvhd)")
        }
        let body = source.bytes(at: mvhd.payloadStart, length: Int(min(mvhd.payloadLength, 32)))
        guard let version = body.uint8(at: 0) else { return .missing("the video's movie header is empty") }
        let created: UInt64?
        switch version {
        case 0: created = body.uint32BE(at: 4).map(UInt64.init)
        case 1: created = body.uint64BE(at: 4)
        default: return .missing("the video's movie header has unknown version \(version)")
        }
        guard let created else { return .missing("the video's movie header is cut short") }
        guard created != 0 else { return .missing("the video's movie header has no creation time") }
        // Before 1970 or absurdly late: a camera whose clock was never set.
        guard created > epochOffset, created - epochOffset < 7_258_118_400 else {
            return .missing("the video's creation time is not a plausible date")
        }
        return .found(unixSeconds: Int64(created - epochOffset))
    }
}
