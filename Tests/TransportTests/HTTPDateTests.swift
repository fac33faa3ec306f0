import Testing
@testable import Transport

@Suite("HTTP dates and Retry-After are read strictly")
struct HTTPDateTests {
    static let sunday1994: Int64 = 784_111_777_000

    @Test("the three forms HTTP allows give the same moment", arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", " Sun, 06 Nov 1994 08:49:37 GMT\t",
    ])
    func forms(text: String) {
        #expect(HTTPDate.milliseconds(text) == Self.sunday1994)
    }

    @Test("anything else is no date, never a guess or a trap", arguments: [
        "", "yesterday", "0", "1e300", "inf", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 +0000",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 29 Feb 1900 00:00:00 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 08:49:61 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 10000 08:49:37 GMT", "Fri, 31 Dec 9999 23:59:60 GMT", "Sun, 06 Nov 1899 08:49:37 GMT", "Sun, 06 Nov 99999999999999999999 08:49:37 GMT",
        "Sun, 06 Nov -994 08:49:37 GMT", "Sun, 06 Nov +994 08:49:37 GMT", "Sun, 06 Nox 1994 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sun,  06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 1994 08:49:37:00 GMT", "Sun Nov 6 08:49:37 1994",
        "Sun Nov   6 08:49:37 1994", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT\r\nX-Evil: 1",
        "Sun, ٠٦ Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:3\u{0301}7 GMT",
    ])
    func refuses(text: String) {
        #expect(HTTPDate.milliseconds(text) == nil, "\(text.debugDescription)")
    }

    @Test("leap days, the edges of the year range and two-digit years read as they should")
    func calendar() {
        #expect(HTTPDate.milliseconds("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(HTTPDate.milliseconds("Wed, 31 Dec 1969 23:59:59 GMT") == -1000)
        #expect(HTTPDate.milliseconds("Tue, 29 Feb 2000 12:00:00 GMT") == 951_825_600_000)
        #expect(HTTPDate.milliseconds("Fri, 31 Dec 9999 23:59:59 GMT") == 253_402_300_799_000)
        #expect(HTTPDate.milliseconds("Mon, 01 Jan 1900 00:00:00 GMT") == -2_208_988_800_000)
        #expect(HTTPDate.milliseconds("Thursday, 01-Jan-70 00:00:00 GMT") == 0)
        #expect(HTTPDate.milliseconds("Saturday, 01-Jan-00 00:00:00 GMT") == 946_684_800_000)
    }

    @Test("formatting gives the IMF-fixdate form back, and refuses moments outside the years it reads")
    func format() {
        #expect(HTTPDate.format(milliseconds: Self.sunday1994) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(milliseconds: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(milliseconds: -1) == "Wed, 31 Dec 1969 23:59:59 GMT")
        #expect(HTTPDate.format(milliseconds: 253_402_300_799_999) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(milliseconds: Int64.max) == nil)
        #expect(HTTPDate.format(milliseconds: Int64.min) == nil)
        var day: Int64 = -2_208_988_800_000
        while day < 253_402_300_799_000 {
            let text = HTTPDate.format(milliseconds: day)
            #expect(text.flatMap { HTTPDate.milliseconds($0) } == day, "\(day) -> \(text ?? "nil")")
            day += 86_400_000 * 97 + 3_723_000
        }
    }

    // MARK: Retry-After

    static let now: Int64 = 1_700_000_000_000

    @Test("delta-seconds within the cap are kept as given")
    func retryAfterSeconds() throws {
        #expect(try RetryAfter.parse("0", now: Self.now) == RetryAfter(given: "0", seconds: 0, wasCapped: false))
        #expect(try RetryAfter.parse(" 120 ", now: Self.now).seconds == 120)
        #expect(try RetryAfter.parse("3600", now: Self.now) == RetryAfter(given: "3600", seconds: 3600, wasCapped: false))
    }

    @Test("a wait longer than an hour, as a number or a far date, is capped at one hour and says so", arguments: [
        "3601", "86400", "9223372036854775807", "9223372036854775808", "99999999999999999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT",
    ])
    func retryAfterCapped(text: String) throws {
        let wait = try RetryAfter.parse(text, now: Self.now)
        #expect(wait.seconds == RetryAfter.cap && wait.wasCapped)
        #expect(wait.given == text)
        #expect(wait.shown.contains(ServerNumber.quoted(text)) && wait.shown.contains("1 h"), "\(wait.shown)")
    }

    @Test("a date is a wait from now, rounded up; a date in the past is no wait")
    func retryAfterDate() throws {
        let soon = try #require(HTTPDate.format(milliseconds: Self.now + 91_000))
        #expect(try RetryAfter.parse(soon, now: Self.now + 500).seconds == 91)
        #expect(try RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: Self.now).seconds == 0)
    }

    @Test("inf, 1e300, negative, fractional or words are no Retry-After: a violation quoting the server", arguments: [
        "inf", "Infinity", "1e300", "-1", "-0", "1.5", "nan", "soon", "", "0x10", "3600s", "\u{1b}[2J",
    ])
    func retryAfterRefused(text: String) {
        let error = #expect(throws: ProtocolViolation.self) { try RetryAfter.parse(text, now: Self.now) }
        #expect(error?.message.contains("`\(ServerNumber.quoted(text))`") == true, "\(error?.message ?? "")")
        #expect(error?.said == "Retry-After: \(text)")
    }
}
