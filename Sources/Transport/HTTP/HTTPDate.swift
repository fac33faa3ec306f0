/// HTTP dates (`Upload-Expires`, `Retry-After`, `Last-Modified`, `getlastmodified`), read
/// strictly and by hand into milliseconds since the epoch.
///
/// The three forms of RFC 9110 §5.6.7 are accepted: IMF-fixdate (`Sun, 06 Nov 1994
/// 08:49:37 GMT`), the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and
/// asctime (`Sun Nov  6 08:49:37 1994`). Every field has a fixed width and a range; the
/// year is four digits from 1900 to 9999, so the result always fits an `Int64` and no
/// floating-point value is ever involved. Anything else is nil, never a guess.
public enum HTTPDate {
    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Milliseconds since 1970-01-01T00:00:00Z, or nil when `text` is not an HTTP date.
    public static func milliseconds(_ text: some StringProtocol) -> Int64? {
        var bytes = Array(Substring(text).utf8)
        while bytes.first == 0x20 || bytes.first == 0x09 { bytes.removeFirst() }
        while bytes.last == 0x20 || bytes.last == 0x09 { bytes.removeLast() }
        // The longest form (RFC 850 with "Wednesday") is 33 bytes.
        guard bytes.count <= 40, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return nil }
        let s = String(decoding: bytes, as: UTF8.self)
        return fixdate(s) ?? rfc850(s) ?? asctime(s)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    static func fixdate(_ s: String) -> Int64? {
        let p = s.split(separator: " ", omittingEmptySubsequences: false)
        guard p.count == 6, p[0].count == 4, p[0].hasSuffix(","), dayNames.contains(String(p[0].dropLast())),
              p[1].count == 2, let day = digits(p[1]), let month = monthNames.firstIndex(of: String(p[2])),
              p[3].count == 4, let year = digits(p[3]), p[5] == "GMT" else { return nil }
        return compose(year: year, month: Int64(month) + 1, day: day, clock: p[4])
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`; a two-digit year below 70 is read as 20xx.
    static func rfc850(_ s: String) -> Int64? {
        let p = s.split(separator: " ", omittingEmptySubsequences: false)
        guard p.count == 4, p[0].hasSuffix(","), longDayNames.contains(String(p[0].dropLast())), p[3] == "GMT" else { return nil }
        let d = p[1].split(separator: "-", omittingEmptySubsequences: false)
        guard d.count == 3, d[0].count == 2, let day = digits(d[0]), let month = monthNames.firstIndex(of: String(d[1])),
              d[2].count == 2, let yy = digits(d[2]) else { return nil }
        return compose(year: yy < 70 ? 2000 + yy : 1900 + yy, month: Int64(month) + 1, day: day, clock: p[2])
    }

    /// `Sun Nov  6 08:49:37 1994` (a one-digit day is padded with a space).
    static func asctime(_ s: String) -> Int64? {
        let p = s.split(separator: " ", omittingEmptySubsequences: true)
        guard p.count == 5, dayNames.contains(String(p[0])), let month = monthNames.firstIndex(of: String(p[1])),
              (1...2).contains(p[2].count), let day = digits(p[2]), p[4].count == 4, let year = digits(p[4]) else { return nil }
        // Exactly the spacing the grammar allows: "Nov  6" or "Nov 16".
        let expected = "\(p[0]) \(p[1]) \(day < 10 ? " " : "")\(day) \(p[3]) \(p[4])"
        guard s == expected else { return nil }
        return compose(year: year, month: Int64(month) + 1, day: day, clock: p[3])
    }

    /// `HH:MM:SS` on the given day, after checking every field's range.
    static func compose(year: Int64, month: Int64, day: Int64, clock: Substring) -> Int64? {
        let c = clock.split(separator: ":", omittingEmptySubsequences: false)
        guard c.count == 3, c.allSatisfy({ $0.count == 2 }), let hour = digits(c[0]), let minute = digits(c[1]),
              let second = digits(c[2]), (1900...9999).contains(year), (1...12).contains(month),
              (1...daysIn(month: month, year: year)).contains(day), (0...23).contains(hour), (0...59).contains(minute),
              (0...60).contains(second) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let moment = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000
        // A leap second on the last day of 9999 is the first moment of 10000: out of range.
        return range.contains(moment) ? moment : nil
    }

    /// The moments a date can name: years 1900 to 9999.
    static let range = (daysFromCivil(year: 1900, month: 1, day: 1) * 86_400_000)...(daysFromCivil(year: 10_000, month: 1, day: 1) * 86_400_000 - 1)

    static func digits(_ text: Substring) -> Int64? {
        guard text.count <= 4 else { return nil }
        return ServerNumber.value(of: text).flatMap { text.utf8.allSatisfy { (0x30...0x39).contains($0) } ? $0 : nil }
    }

    static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The IMF-fixdate form of a moment (for `If-Range`), or nil outside years 1900 to 9999.
    public static func format(milliseconds: Int64) -> String? {
        guard range.contains(milliseconds) else { return nil }
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let clock = seconds - days * 86_400
        let (year, month, day) = civilFromDays(days)
        let weekday = ((days % 7) + 7 + 3) % 7 // 1970-01-01 was a Thursday (index 3)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(dayNames[Int(weekday)]), \(two(day)) \(monthNames[Int(month - 1)]) \(year) "
            + "\(two(clock / 3600)):\(two(clock / 60 % 60)):\(two(clock % 60)) GMT"
    }

    static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
