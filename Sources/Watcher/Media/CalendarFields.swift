/// A date and time as a clock showed it, without a time zone.
public struct CalendarFields: Sendable, Equatable, Codable, CustomStringConvertible {
    public var year: Int, month: Int, day: Int
    public var hour: Int, minute: Int, second: Int

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year; self.month = month; self.day = day
        self.hour = hour; self.minute = minute; self.second = second
    }

    /// "2024-05-01 12:34:56".
    public var description: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(hour)):\(two(minute)):\(two(second))"
    }

    /// Whether this is a real moment of the Gregorian calendar in a plausible range.
    var isPlausible: Bool {
        guard (1900...2200).contains(year), (1...12).contains(month), (0...23).contains(hour),
              (0...59).contains(minute), (0...60).contains(second) else { return false }
        let days = [31, year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return (1...days[month - 1]).contains(day)
    }
}
