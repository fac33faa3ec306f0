import Foundation
import Platform
import Queue
import TestSupport
import Testing

@Suite("A watch rule's memory and holds in the queue")
struct WatchMemoryTests {
    let folder = TemporaryFolder("iu-queue")

    func makeStore() throws -> (QueueStore, Account) {
        let store = try QueueStore(path: folder.path + "/state/queue.sqlite3")
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        return (store, account)
    }

    static func fingerprint(_ n: Int64, size: Int64 = 100) -> FileFingerprint {
        FileFingerprint(device: 1, inode: UInt64(n), size: size, mtimeNanoseconds: n)
    }

    func upload(_ account: Account, _ path: String, rule: String?, origin: Origin = .auto) -> NewTransfer {
        NewTransfer(direction: .upload, origin: origin, accountID: account.id, localPath: LocalPath(path),
                    remotePath: "/Photos/" + (path.split(separator: "/").last.map(String.init) ?? path), bytesTotal: 100, watchRule: rule)
    }

    @Test("files are recorded per rule and path: a new file at a taken path replaces the old record")
    func records() throws {
        let (store, _) = try makeStore()
        #expect(try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(1), kind: .upload)]) == false,
                "a rule without memory (removed) records nothing")
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(1), kind: .upload),
                                            TakenFile(path: LocalPath("/c/old.jpg"), fingerprint: Self.fingerprint(2), kind: .baseline)])
        try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(3), kind: .upload)])
        #expect(try store.takenFingerprints(rule: "cam", paths: [LocalPath("/c/a.jpg"), LocalPath("/c/new.jpg")]) == [LocalPath("/c/a.jpg"): Self.fingerprint(3)])
        #expect(try store.takenFiles(rule: "cam").count == 2)
        #expect(try store.takenContent(rule: "cam", sizes: [100, 7]).mapValues { $0.map(\.path) } == [100: [LocalPath("/c/a.jpg")]],
                "the baseline is no content the rule took")
        let overview = try store.watchOverview(rule: "cam")
        #expect(overview.taken == 1 && overview.baseline == 1 && overview.lastTaken == LocalPath("/c/a.jpg"))

        // A batch longer than one statement takes is asked in pieces.
        let many = (0..<1_200).map { TakenFile(path: LocalPath("/c/many/\($0).jpg"), fingerprint: Self.fingerprint(Int64($0), size: 1_000 + Int64($0)), kind: .upload) }
        try store.recordTaken(rule: "cam", many)
        #expect(try store.takenFingerprints(rule: "cam", paths: many.map(\.path)).count == 1_200)
        #expect(try store.takenContent(rule: "cam", sizes: Set(many.map(\.fingerprint.size))).values.map(\.count).reduce(0, +) == 1_200)

        try store.removeWatchMemory(rule: "cam")
        #expect(try store.takenFiles(rule: "cam").isEmpty)
        #expect(try store.watchMemory(rule: "cam") == nil)
    }

    @Test("a rename inside the folder moves the records and the unfinished uploads' paths, nothing else")
    func renames() throws {
        let (store, account) = try makeStore()
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        try store.recordTaken(rule: "cam", ["/c/a/1.jpg", "/c/a/sub/2.jpg", "/c/ab/3.jpg", "/c/2024/1.jpg"].enumerated().map {
            TakenFile(path: LocalPath($0.element), fingerprint: Self.fingerprint(Int64($0.offset)), kind: .upload)
        } + [TakenFile(path: LocalPath(bytes: Array("/c/a/caf".utf8) + [0xE9] + Array(".jpg".utf8)), fingerprint: Self.fingerprint(7), kind: .upload)])
        let ids = try store.enqueue([upload(account, "/c/a/1.jpg", rule: "cam"), upload(account, "/c/a/sub/2.jpg", rule: "cam"),
                                     upload(account, "/c/ab/3.jpg", rule: "cam"), upload(account, "/c/a/1.jpg", rule: nil, origin: .manual)])
        try store.start(ids[1], resumedAt: 0)
        try store.complete(ids[1], sha256: nil, bytes: 100)
        try store.moveTaken(rule: "cam", from: LocalPath("/c/a"), to: LocalPath("/c/2024"))
        let taken = try store.takenFiles(rule: "cam")
        #expect(Set(taken.map(\.path)) == [LocalPath("/c/2024/1.jpg"), LocalPath("/c/2024/sub/2.jpg"), LocalPath("/c/ab/3.jpg"),
                                            LocalPath(bytes: Array("/c/2024/caf".utf8) + [0xE9] + Array(".jpg".utf8))],
                "a name that is not UTF-8 keeps its bytes")
        #expect(taken.first { $0.path == LocalPath("/c/2024/1.jpg") }?.fingerprint == Self.fingerprint(0),
                "the record of a file that was at the new path is gone")
        let paths = try ids.map { try store.transfer(id: $0)?.localPath.text }
        #expect(paths == ["/c/2024/1.jpg", "/c/a/sub/2.jpg", "/c/ab/3.jpg", "/c/a/1.jpg"],
                "queued uploads of the rule follow; a completed one and another front door's are left as they were")
    }

    @Test("a completed upload teaches the rule its content, and waits for its after-upload step")
    func completion() throws {
        let (store, account) = try makeStore()
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        let id = try store.enqueue([upload(account, "/c/a.jpg", rule: "cam")])[0]
        try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(1), kind: .upload, transferID: id)])
        #expect(try store.uploadsAwaitingAfterStep(rule: "cam").isEmpty)
        try store.start(id, resumedAt: 0)
        try store.complete(id, sha256: "ab12", bytes: 100)
        #expect(try store.takenContent(rule: "cam", sizes: [100])[100]?.first?.sha256 == "ab12")
        #expect(try store.uploadsAwaitingAfterStep(rule: "cam") == [id])
        try store.markAfterUploadDone(transferID: id)
        #expect(try store.uploadsAwaitingAfterStep(rule: "cam").isEmpty)
    }

    @Test("rows of a held rule are left out and told why; other rules, other front doors and `--now` rows go")
    func holds() throws {
        let (store, account) = try makeStore()
        let wifiAccount = try store.addAccount(name: "camera", webdavURL: "http://127.0.0.1:1/dav/c/", tusURL: "http://127.0.0.1:1/files/",
                                               username: "c", wifiOnly: true)
        try store.enqueue((0..<1000).map { upload(account, "/c/held\($0).jpg", rule: "cam") })
        let other = try store.enqueue([upload(account, "/s/scan.jpg", rule: "scans")])
        let manual = try store.enqueue([upload(account, "/c/by-hand.jpg", rule: "cam", origin: .manual)])
        let now = try store.enqueue([upload(account, "/c/now.jpg", rule: "cam")])
        try store.setIgnoreRules(now)
        // A rule's rows follow the rule, whatever the account-wide flag says.
        let ruleOnWifiAccount = try store.enqueue([upload(wifiAccount, "/p/phone.jpg", rule: "phone")])
        let next = try store.runnable(direction: .upload, now: nowMilliseconds(), limit: 10, holdingWifiRule: true, holdingRules: ["cam"])
        #expect(next.map(\.id) == manual + other + now + ruleOnWifiAccount)

        try store.hold(.rules(["cam"]), reason: Reason(.battery, "waiting for mains power: BAT0 discharging 54 %"))
        let rows = try store.transfers(state: .queued)
        #expect(rows.filter { $0.reason?.code == .battery }.count == 1000)
        #expect(rows.first { $0.id == other[0] }?.reason == nil)
        #expect(rows.first { $0.id == manual[0] }?.reason == nil)
        let held = try store.watchOverview(rule: "cam").held
        #expect(held.map(\.count) == [1000] && held.first?.reason.message.contains("BAT0") == true)
    }
}
