import Foundation
import Testing
import TestSupport
@testable import Watcher

@Suite("Capture dates")
struct CaptureDateTests {
    static let mtime: Int64 = 1_600_000_000 * 1_000_000_000

    func date(_ bytes: [UInt8], name: String = "f") -> CaptureDate? {
        MediaInspector.inspect(bytes: bytes, name: Array(name.utf8), modificationTimeNanoseconds: Self.mtime)?.captureDate
    }

    @Test("a JPEG's EXIF DateTimeOriginal, with OffsetTimeOriginal when present")
    func jpegExif() throws {
        let withOffset = try #require(date(MediaFiles.photo("2023:07:14 09:30:00", offset: "+02:00")))
        #expect(withOffset.source == .exif)
        #expect(withOffset.moment == .wallClock(CalendarFields(year: 2023, month: 7, day: 14, hour: 9, minute: 30), utcOffsetSeconds: 7200))
        #expect(withOffset.fallbackReason == nil)
        let without = try #require(date(MediaFiles.photo("2019:12:31 23:59:58")))
        #expect(without.moment == .wallClock(CalendarFields(year: 2019, month: 12, day: 31, hour: 23, minute: 59, second: 58), utcOffsetSeconds: nil))
        let west = try #require(date(MediaFiles.jpeg(exif: MediaFiles.exif(dateTimeOriginal: "2020:02:29 12:00:00", offset: "-05:30", bigEndian: true), jfif: true)))
        #expect(west.moment == .wallClock(CalendarFields(year: 2020, month: 2, day: 29, hour: 12), utcOffsetSeconds: -19800))
    }

    @Test("an HEIC's Exif item, found through iinf and iloc, in mdat or in idat", arguments: [(UInt8(0), false), (1, false), (2, false), (1, true)])
    func heicExif(ilocVersion: UInt8, inIdat: Bool) throws {
        let exif = MediaFiles.exif(dateTimeOriginal: "2022:01:02 03:04:05", offset: "+09:00")
        let found = try #require(date(MediaFiles.heic(exif: exif, inIdat: inIdat, ilocVersion: ilocVersion)))
        #expect(found.source == .exif)
        #expect(found.moment == .wallClock(CalendarFields(year: 2022, month: 1, day: 2, hour: 3, minute: 4, second: 5), utcOffsetSeconds: 32400))
    }

    @Test("an MP4's or MOV's mvhd creation time, version 0 and 1, movie box before or after the media", arguments: [
        (UInt8(0), false, false), (1, false, true), (0, true, false), (1, true, true),
    ])
    func movieHeader(version: UInt8, quickTime: Bool, moovFirst: Bool) throws {
        let found = try #require(date(MediaFiles.movie(creation: 1_700_000_000, version: version, quickTime: quickTime, moovFirst: moovFirst)))
        #expect(found.source == .movieHeader)
        #expect(found.moment == .instant(unixSeconds: 1_700_000_000))
    }

    @Test("a TIFF-based RAW and a WebP carry EXIF too")
    func rawAndWebP() throws {
        let raw = try #require(date(MediaFiles.raw(dateTimeOriginal: "2021:05:06 07:08:09"), name: "DSC_0001.NEF"))
        #expect(raw.moment == .wallClock(CalendarFields(year: 2021, month: 5, day: 6, hour: 7, minute: 8, second: 9), utcOffsetSeconds: nil))
        let webp = try #require(date(MediaFiles.webp(exif: MediaFiles.exif(dateTimeOriginal: "2018:03:04 05:06:07"))))
        #expect(webp.moment == .wallClock(CalendarFields(year: 2018, month: 3, day: 4, hour: 5, minute: 6, second: 7), utcOffsetSeconds: nil))
    }

    @Test("without a date inside, the file's mtime, and the log is told why")
    func mtimeFallback() throws {
        for bytes in [MediaFiles.png, MediaFiles.gif, MediaFiles.jpeg(exif: nil)] {
            let found = try #require(date(bytes))
            #expect(found.source == .modificationTime)
            #expect(found.moment == .instant(unixSeconds: 1_600_000_000))
            #expect(found.fallbackReason?.isEmpty == false)
        }
    }

    @Test("a camera's clock is filed as it showed; an instant in the local time zone")
    func calendarFields() {
        let wall = CaptureDate(moment: .wallClock(CalendarFields(year: 2024, month: 12, day: 31, hour: 23), utcOffsetSeconds: -18000), source: .exif)
        #expect(wall.calendarFields(in: TimeZone(identifier: "Asia/Tokyo")!).day == 31)
        let instant = CaptureDate(moment: .instant(unixSeconds: 1_735_689_600), source: .movieHeader)  // 2025-01-01 00:00 UTC
        #expect(instant.calendarFields(in: TimeZone(identifier: "UTC")!) == CalendarFields(year: 2025, month: 1, day: 1))
        #expect(instant.calendarFields(in: TimeZone(identifier: "America/New_York")!) == CalendarFields(year: 2024, month: 12, day: 31, hour: 19))
        let before1970 = CaptureDate.modificationTime(nanoseconds: -1, reason: nil)
        #expect(before1970.moment == .instant(unixSeconds: -1))
    }
}
