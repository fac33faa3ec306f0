import Foundation
import Platform
import Queue
import TestSupport
import Testing

@Suite("Times in the system's zone")
struct LocalTimeTests {
    @Test("show gives a transfer's times in the zone TZ names, with that zone's offset on that day")
    func showFollowsTZ() throws {
        let session = try AgentHarness()
        let store = try QueueStore(path: session.databasePath)
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:9/dav/", tusURL: "http://127.0.0.1:9/files/",
                                           username: "alice")
        let id = try store.enqueue([NewTransfer(direction: .upload, origin: .manual, accountID: account.id,
                                                localPath: LocalPath("/pictures/IMG_0.jpg"), remotePath: "/Photos/IMG_0.jpg",
                                                bytesTotal: 1)])[0]
        let created = try #require(try store.transfer(id: id)).createdAt
        for zone in ["UTC", "Asia/Tokyo", "America/New_York", "Europe/Berlin"] {
            session.environment["TZ"] = zone
            let shown = try session.cli(["show", String(id)])
            let line = shown.stdout.split(separator: "\n").first { $0.hasPrefix("created") }.map(String.init) ?? shown.stdout
            // The expectation from ICU's zone data, which the binary does not use.
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = try #require(TimeZone(identifier: zone))
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute],
                                            from: Date(timeIntervalSince1970: TimeInterval(created / 1000)))
            func two(_ n: Int?) -> String { String(format: "%02d", n ?? -1) }
            let expected = "\(c.year ?? -1)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute))"
            #expect(line.contains(expected), "TZ=\(zone): \(line)")
        }
    }
}
