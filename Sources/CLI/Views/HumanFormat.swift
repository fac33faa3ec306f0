import FoundationEssentials
import Platform

/// Numbers, sizes, durations and times the way a person reads them.
public enum HumanFormat {
    private static let units = ["kB", "MB", "GB", "TB", "PB", "EB"]

    /// A size in decimal units: `999 B`, `1.5 MB`, `27 MB`, `340 GB`.
    ///
    /// One decimal below 10 of a unit, whole numbers above, so the width stays small and
    /// the precision stays meaningful.
    public static func bytes(_ count: Int64) -> String {
        if count < 1000 { return "\(max(0, count)) B" }
        var value = Double(count)
        var unit = -1
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        let tenths = Int(saturating: (value * 10).rounded())
        if tenths < 100 { return "\(tenths / 10).\(tenths % 10) \(units[unit])" }
        let whole = Int(saturating: value.rounded())
        if whole >= 1000, unit < units.count - 1 { return "1.0 \(units[unit + 1])" }
        return "\(whole) \(units[unit])"
    }

    /// A transfer rate, e.g. `1.5 MB/s`.
    public static func rate(_ bytesPerSecond: Double) -> String {
        bytes(Int64(saturating: max(0, bytesPerSecond))) + "/s"
    }

    /// A duration: `12 s`, `3 min`, `2 h 5 min`, `3 d 4 h`. Parts of a second round up,
    /// so something about to happen never reads `0 s`.
    public static func duration(seconds: Double) -> String {
        guard seconds.isFinite, seconds > 0 else { return "0 s" }
        let whole = Int64(saturating: min(seconds.rounded(.up), 1e15))
        if whole < 60 { return "\(whole) s" }
        let minutes = (whole + 30) / 60
        if minutes < 60 { return "\(minutes) min" }
        let hours = minutes / 60
        if hours < 24 { return minutes % 60 == 0 ? "\(hours) h" : "\(hours) h \(minutes % 60) min" }
        let days = hours / 24
        return hours % 24 == 0 ? "\(days) d" : "\(days) d \(hours % 24) h"
    }

    public static func duration(milliseconds: Int64) -> String { duration(seconds: Double(milliseconds) / 1000) }

    /// A moment in local time to the minute, e.g. `2026-11-29 14:03`: in `timeZone`, or
    /// with nil in the system's as it stood at that moment.
    public static func timestamp(_ milliseconds: Int64, timeZone: TimeZone? = nil) -> String {
        let c = components(milliseconds, timeZone)
        return "\(c.year!)-\(two(c.month!))-\(two(c.day!)) \(two(c.hour!)):\(two(c.minute!))"
    }

    /// A moment relative to `now`: `in 12 s`, `3 min ago`, `now`.
    public static func relative(_ milliseconds: Int64, now: Int64) -> String {
        let delta = milliseconds - now
        if abs(delta) < 1000 { return "now" }
        return delta > 0 ? "in " + duration(milliseconds: delta) : duration(milliseconds: -delta) + " ago"
    }

    /// Both at once: `2026-11-29 14:03 (3 min ago)`.
    public static func moment(_ milliseconds: Int64, now: Int64, timeZone: TimeZone? = nil) -> String {
        "\(timestamp(milliseconds, timeZone: timeZone)) (\(relative(milliseconds, now: now)))"
    }

    /// A moment for programs: ISO 8601 in UTC with milliseconds, e.g. `2026-11-29T13:03:07.250Z`.
    public static func iso8601(_ milliseconds: Int64) -> String {
        let millis = Int(((milliseconds % 1000) + 1000) % 1000)
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        guard let (year, month, day, second) = civilUTC(milliseconds) else { return iso8601ByCalendar(milliseconds) }
        return "\(year)-\(two(month))-\(two(day))T\(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60)).\(ms)Z"
    }

    /// `iso8601` as `Calendar` has it: for moments `civilUTC` does not count, and for the
    /// test that both agree.
    static func iso8601ByCalendar(_ milliseconds: Int64) -> String {
        let c = components(milliseconds, .gmt)
        let millis = Int(((milliseconds % 1000) + 1000) % 1000)
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(c.year!)-\(two(c.month!))-\(two(c.day!))T\(two(c.hour!)):\(two(c.minute!)):\(two(c.second!)).\(ms)Z"
    }

    /// The UTC date and second of the day of a moment from 1970 to 9999, counted (the
    /// proleptic Gregorian calendar's days, as Howard Hinnant's `civil_from_days`) rather
    /// than asked of `Calendar`, which cost `queue --json` a tenth of its time; nil outside.
    static func civilUTC(_ milliseconds: Int64) -> (year: Int, month: Int, day: Int, second: Int)? {
        guard milliseconds >= 0, milliseconds < 253_402_300_800_000 else { return nil }
        let seconds = Int(milliseconds / 1000)
        let z = seconds / 86_400 + 719_468           // days since 0000-03-01
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // from March 1
        let m = (5 * dayOfYear + 2) / 153
        let month = m < 10 ? m + 3 : m - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, dayOfYear - (153 * m + 2) / 5 + 1, seconds % 86_400)
    }

    private static func components(_ milliseconds: Int64, _ timeZone: TimeZone?) -> DateComponents {
        // Rounded down, also for the earliest moment a corrupt row can hold.
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : -(-(milliseconds + 1) / 1000) - 1
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone ?? .system(at: date)
        return calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
