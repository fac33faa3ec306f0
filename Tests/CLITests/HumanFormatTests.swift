@testable import CLI
import Foundation
import Testing

@Suite("Human formats")
struct HumanFormatTests {
    @Test("sizes use decimal units with one decimal below ten", arguments: [
        (Int64(0), "0 B"), (999, "999 B"), (1_000, "1.0 kB"), (1_500_000, "1.5 MB"), (9_949_999, "9.9 MB"),
        (9_960_000, "10 MB"), (27_000_000, "27 MB"), (999_600, "1.0 MB"), (340_000_000_000, "340 GB"),
    ])
    func sizes(_ count: Int64, _ expected: String) {
        #expect(HumanFormat.bytes(count) == expected)
    }

    @Test("durations read as seconds, minutes, hours and days", arguments: [
        (0.2, "1 s"), (12.0, "12 s"), (59.0, "59 s"), (180.0, "3 min"), (3_599.0, "1 h"), (7_500.0, "2 h 5 min"),
        (7_200.0, "2 h"), (97_200.0, "1 d 3 h"), (-5.0, "0 s"),
    ])
    func durations(_ seconds: Double, _ expected: String) {
        #expect(HumanFormat.duration(seconds: seconds) == expected)
    }

    @Test("timestamps are local time to the minute")
    func timestamps() {
        #expect(HumanFormat.timestamp(fixedNow, timeZone: utc) == "2026-11-29 14:03")
        #expect(HumanFormat.timestamp(fixedNow, timeZone: TimeZone(identifier: "Europe/Berlin")!) == "2026-11-29 15:03")
    }

    @Test("relative times say in, ago, or now")
    func relative() {
        #expect(HumanFormat.relative(fixedNow + 12_000, now: fixedNow) == "in 12 s")
        #expect(HumanFormat.relative(fixedNow - 180_000, now: fixedNow) == "3 min ago")
        #expect(HumanFormat.relative(fixedNow + 400, now: fixedNow) == "now")
    }

    @Test("ISO 8601 is UTC with milliseconds")
    func iso() {
        #expect(HumanFormat.iso8601(fixedNow) == "2026-11-29T14:03:07.250Z")
        #expect(HumanFormat.iso8601(0) == "1970-01-01T00:00:00.000Z")
    }

    @Test("ISO 8601 counted from the days since 1970 is what Calendar says, leap days and the last moment of 9999 included")
    func isoCounted() {
        let day: Int64 = 86_400_000
        // 1972-02-29, 2000-02-29 and 2000-03-01, 2100-02-28 and 2100-03-01 (no leap day), 9999-12-31 23:59:59.999
        var moments: [Int64] = [0, 1, 999, 1000, day - 1, day, 789 * day, 11_016 * day, 11_017 * day, 47_540 * day,
                                47_541 * day, 253_402_300_799_999]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 { moments.append(Int64.random(in: 0..<4_200_000_000_000, using: &generator)) }
        for moment in moments {
            #expect(HumanFormat.iso8601(moment) == HumanFormat.iso8601ByCalendar(moment), "\(moment)")
        }
        // Outside what is counted, Calendar answers; a corrupt row's time never stops the listing.
        #expect(HumanFormat.iso8601(-1) == "1969-12-31T23:59:59.999Z")
        #expect(HumanFormat.iso8601(253_402_300_800_000) == "10000-01-01T00:00:00.000Z")
        for corrupt in [Int64.min, Int64.min + 1, Int64.max] {
            #expect(!HumanFormat.iso8601(corrupt).isEmpty && !HumanFormat.timestamp(corrupt, timeZone: .gmt).isEmpty)
        }
    }
}
