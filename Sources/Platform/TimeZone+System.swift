import FoundationEssentials
import Glibc

extension TimeZone {
    /// The system's time zone as it stands at `date`: the offset from UTC the C library finds
    /// for that moment in `TZ` or /etc/localtime, daylight saving time included.
    ///
    /// Not `TimeZone.current`: without ICU's data Foundation knows no zone but GMT, and every
    /// local time would be shown, and every photo filed, in UTC.
    public static func system(at date: Date) -> TimeZone {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var fields = tm()
        guard localtime_r(&seconds, &fields) != nil else { return .gmt }
        return TimeZone(secondsFromGMT: fields.tm_gmtoff) ?? .gmt
    }
}
