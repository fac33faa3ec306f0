import Foundation
import Platform
import Testing
@testable import Watcher

@Suite("Where a file goes on the server")
struct RemotePathPlannerTests {
    let utc = TimeZone(identifier: "UTC")!
    let exif = CaptureDate(moment: .wallClock(CalendarFields(year: 2024, month: 3, day: 5, hour: 23, minute: 30), utcOffsetSeconds: -18000), source: .exif)

    func rule(_ subfolders: WatchRule.DateSubfolders) -> WatchRule {
        WatchRule(id: "c", folder: LocalPath("/home/me/Camera"), remoteFolder: "/Photos/Camera/", subfolders: subfolders)
    }

    @Test("rule target / date folders / original name", arguments: [
        (WatchRule.DateSubfolders.none, "/Photos/Camera/IMG_0001.jpg"),
        (.year, "/Photos/Camera/2024/IMG_0001.jpg"),
        (.month, "/Photos/Camera/2024/03/IMG_0001.jpg"),
        (.day, "/Photos/Camera/2024/03/05/IMG_0001.jpg"),
    ])
    func layout(subfolders: WatchRule.DateSubfolders, expected: String) {
        #expect(RemotePathPlanner.remotePath(for: LocalPath("/home/me/Camera/sub/IMG_0001.jpg"), capturedAt: exif, rule: rule(subfolders), timeZone: utc) == expected)
    }

    @Test("a camera's clock decides the day as it showed; an instant is a day in local time")
    func days() {
        // 23:30 at UTC-5 is already the 6th in UTC: the photographer's day is the 5th.
        #expect(RemotePathPlanner.folder(capturedAt: exif, subfolders: .day, under: "/P", timeZone: utc) == "/P/2024/03/05")
        let video = CaptureDate(moment: .instant(unixSeconds: 1_704_067_200), source: .movieHeader)  // 2024-01-01 00:00 UTC
        #expect(RemotePathPlanner.folder(capturedAt: video, subfolders: .day, under: "/P", timeZone: utc) == "/P/2024/01/01")
        #expect(RemotePathPlanner.folder(capturedAt: video, subfolders: .month, under: "/P", timeZone: TimeZone(identifier: "America/Los_Angeles")!) == "/P/2023/12")
        #expect(RemotePathPlanner.folder(capturedAt: video, subfolders: .year, under: "/", timeZone: utc) == "/2024")
    }

    @Test("a name that is not UTF-8 is still a name on the server")
    func oddName() {
        let path = RemotePathPlanner.remotePath(for: LocalPath(bytes: Array("/c/caf".utf8) + [0xE9] + Array(".jpg".utf8)), capturedAt: exif,
                                                rule: rule(WatchRule.DateSubfolders.none), timeZone: utc)
        #expect(path == "/Photos/Camera/caf\u{FFFD}.jpg")
    }
}
