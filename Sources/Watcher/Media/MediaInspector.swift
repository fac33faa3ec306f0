import Platform

/// What a file is, and when it was taken.
public struct MediaInfo: Sendable, Equatable {
    public var format: MediaFormat
    public var kind: MediaKind { format.kind }
    public var captureDate: CaptureDate
}

/// Classifies a file by its first bytes and reads its capture date.
///
/// The readers are pure functions over a `ByteSource`, so they run the same on a file and
/// on a buffer (a fuzzer's input). Whatever the bytes, they do a bounded amount of work:
/// at most a few hundred reads and a few MiB in all (`BudgetedSource`), checked
/// arithmetic on every size and offset, and any damage ends in the file's mtime with a
/// reason, never a crash.
public enum MediaInspector {
    /// Inspects `bytes` as a file named `name` last modified at `modificationTimeNanoseconds`.
    /// nil when it is neither a picture nor a video.
    public static func inspect(bytes: [UInt8], name: [UInt8] = [], modificationTimeNanoseconds: Int64 = 0) -> MediaInfo? {
        inspect(MemoryBytes(bytes), name: name, modificationTimeNanoseconds: modificationTimeNanoseconds)
    }

    /// Inspects the regular file at `path`. nil when it is neither a picture nor a video.
    public static func inspect(file path: LocalPath) throws(SystemError) -> MediaInfo? {
        let file = try FileBytes(path)
        return inspect(file, name: path.lastComponent.bytes, modificationTimeNanoseconds: file.fingerprint.mtimeNanoseconds)
    }

    static func inspect(_ base: any ByteSource, name: [UInt8], modificationTimeNanoseconds mtime: Int64) -> MediaInfo? {
        let source = BudgetedSource(base)
        let header = source.bytes(at: 0, length: MediaClassifier.headerLength)
        guard let format = MediaClassifier.classify(header: header, name: name) else { return nil }
        let date: CaptureDate
        switch reading(format, in: source) {
        case .date(let found):
            date = found
        case .none(let reason):
            let why = source.isExhausted ? "the file's metadata is larger than this reader looks at" : reason
            date = .modificationTime(nanoseconds: mtime, reason: why)
        }
        return MediaInfo(format: format, captureDate: date)
    }

    private enum Reading {
        case date(CaptureDate)
        case none(String)
    }

    private static func reading(_ format: MediaFormat, in source: any ByteSource) -> Reading {
        switch format {
        case .jpeg:
            switch JPEGSegments.exifPayload(in: source) {
            case .exif(let tiff): return exif(tiff)
            case .missing(let reason): return .none(reason)
            }
        case .heif, .avif:
            switch HEIFExif.exifPayload(in: source) {
            case .exif(let tiff): return exif(tiff)
            case .missing(let reason): return .none(reason)
            }
        case .webp:
            switch WebPChunks.exifPayload(in: source) {
            case .exif(let tiff): return exif(tiff)
            case .missing(let reason): return .none(reason)
            }
        case .tiffRaw:
            // The file is a TIFF structure itself; its EXIF IFD sits near the start.
            return exif(source.bytes(at: 0, length: 0x10000))
        case .mp4, .quickTime, .threeGPP:
            switch MovieHeader.creationTime(in: source) {
            case .found(let seconds): return .date(CaptureDate(moment: .instant(unixSeconds: seconds), source: .movieHeader))
            case .missing(let reason): return .none(reason)
            }
        case .png, .gif, .bmp, .jpegXL, .cr3, .raf, .crw, .rawByName, .matroska, .webm, .avi, .mpegTS, .mpegPS, .asf:
            return .none("this reader takes no capture date from \(format.rawValue) files")
        }
    }

    private static func exif(_ tiff: [UInt8]) -> Reading {
        switch ExifDateReader.captureDate(tiff: tiff) {
        case .found(let fields, let offset):
            return .date(CaptureDate(moment: .wallClock(fields, utcOffsetSeconds: offset), source: .exif))
        case .missing(let reason):
            return .none(reason)
        }
    }
}
