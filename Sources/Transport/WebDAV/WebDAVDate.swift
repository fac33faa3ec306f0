import Foundation
import Glibc

/// Reads `getlastmodified` dates.
///
/// The IMF-fixdate form every server sends (`Sun, 06 Nov 1994 08:49:37 GMT`) is parsed by
/// hand: a listing of thousands of files must not build a DateFormatter per entry. Other
/// HTTP date forms fall back to `HTTPDate`.
enum WebDAVDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func parse(_ text: String) -> Date? {
        if let date = parseFixdate(text) { return date }
        return HTTPDate.milliseconds(text).map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    static func parseFixdate(_ text: String) -> Date? {
        // "Sun, 06 Nov 1994 08:49:37 GMT"
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT" || parts[5] == "UTC",
              let day = Int32(parts[1]), let monthIndex = months.firstIndex(of: String(parts[2])),
              let year = Int32(parts[3]) else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let hour = Int32(clock[0]), let minute = Int32(clock[1]), let second = Int32(clock[2]),
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var fields = tm()
        fields.tm_year = year - 1900
        fields.tm_mon = Int32(monthIndex)
        fields.tm_mday = day
        fields.tm_hour = hour
        fields.tm_min = minute
        fields.tm_sec = second
        let seconds = timegm(&fields)
        return seconds == -1 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
