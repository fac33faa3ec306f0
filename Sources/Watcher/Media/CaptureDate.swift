import FoundationEssentials
import Platform

/// When a picture or video was taken, and how that is known.
public struct CaptureDate: Sendable, Equatable, Codable {
    public enum Source: String, Sendable, Equatable, Codable {
        /// EXIF DateTimeOriginal (from a JPEG, an HEIC's Exif item, a TIFF-based RAW, a WebP).
        case exif
        /// `creation_time` of the movie header (`mvhd`) of an MP4 or QuickTime file.
        case movieHeader = "movie_header"
        /// The file's modification time: the file says nothing usable itself.
        case modificationTime = "modification_time"
    }

    public enum Moment: Sendable, Equatable, Codable {
        /// The camera's clock, with its offset from UTC when the file gives one.
        case wallClock(CalendarFields, utcOffsetSeconds: Int?)
        /// A point in time, as seconds since 1970 UTC.
        case instant(unixSeconds: Int64)
    }

    public var moment: Moment
    public var source: Source
    /// Why the file's own date was not used, for the log ("EXIF DateTimeOriginal is `0000:00:00`").
    public var fallbackReason: String?

    public init(moment: Moment, source: Source, fallbackReason: String? = nil) {
        self.moment = moment
        self.source = source
        self.fallbackReason = fallbackReason
    }

    /// The file's modification time, with the reason the file's metadata was not used.
    public static func modificationTime(nanoseconds: Int64, reason: String?) -> CaptureDate {
        CaptureDate(moment: .instant(unixSeconds: nanoseconds.dividedRoundingDown(by: 1_000_000_000)),
                    source: .modificationTime, fallbackReason: reason)
    }

    /// The day and time to file this under: a camera's clock as it showed (that is the
    /// photographer's local time, offset or not), an instant in `timeZone` (nil: the
    /// system's, as it stood at that instant).
    public func calendarFields(in timeZone: TimeZone?) -> CalendarFields {
        switch moment {
        case .wallClock(let fields, _):
            return fields
        case .instant(let seconds):
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone ?? .system(at: date)
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            return CalendarFields(year: c.year ?? 1970, month: c.month ?? 1, day: c.day ?? 1,
                                  hour: c.hour ?? 0, minute: c.minute ?? 0, second: c.second ?? 0)
        }
    }
}

extension Int64 {
    func dividedRoundingDown(by divisor: Int64) -> Int64 {
        let (q, r) = quotientAndRemainder(dividingBy: divisor)
        return r < 0 ? q - 1 : q
    }
}
