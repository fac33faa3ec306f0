import Platform
import Queue
import TestSupport
import Testing

/// A gate that holds part of the queue marks its rows once (`QueueStore+Hold.swift`), so the
/// scheduler's query never reads past them, and lifts the mark when it opens.
@Suite("Rows held by a gate")
struct HoldTests {
    let folder = TemporaryFolder("iu-hold")

    func makeStore() throws -> (QueueStore, Account) {
        let store = try QueueStore(path: folder.path + "/queue.sqlite3")
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        return (store, account)
    }

    func photos(_ store: QueueStore, _ account: Account, rule: String?, _ names: Range<Int>) throws -> [Int64] {
        try store.enqueue(names.map {
            NewTransfer(direction: .upload, origin: .auto, accountID: account.id, localPath: LocalPath("/c/\(rule ?? "none")/\($0).jpg"),
                        remotePath: "/Photos/\(rule ?? "none")-\($0).jpg", bytesTotal: 100, watchRule: rule)
        })
    }

    func ready(_ store: QueueStore) throws -> [Int64] {
        try store.runnable(direction: .upload, now: nowMilliseconds(), limit: 10_000).map(\.id)
    }

    func reasons(_ store: QueueStore, _ ids: [Int64]) throws -> Set<ReasonCode?> {
        Set(try ids.map { try store.transfer(id: $0)?.reason?.code })
    }

    static let battery = Reason(.battery, "waiting for mains power: BAT0 discharging 54 %")

    @Test("a shut gate's rows are marked once and say why; the rows behind them are ready without naming the gate")
    func marked() throws {
        let (store, account) = try makeStore()
        let held = try photos(store, account, rule: "cam", 0..<500)
        let behind = try photos(store, account, rule: "scans", 0..<3)
        try store.hold(.rule("cam", account: account.id), reason: Self.battery)
        #expect(try ready(store) == behind)
        #expect(try reasons(store, held) == [.battery])
        #expect(try store.heldScopes() == [.rule("cam", account: account.id)])

        // A photo arriving meanwhile is ready until the scheduler meets it and holds the gate
        // again, which marks it too.
        let late = try photos(store, account, rule: "cam", 500..<501)
        #expect(try ready(store) == behind + late)
        try store.hold(.rule("cam", account: account.id), reason: Self.battery)
        #expect(try ready(store) == behind)
        #expect(try reasons(store, late) == [.battery])

        // Opened: every row is ready again, in the order it was queued.
        try store.release(.rule("cam", account: account.id))
        #expect(try ready(store) == held + behind + late)
        #expect(try store.heldScopes().isEmpty)
    }

    @Test("each gate is its own: a rule of one account, the Wi-Fi flag of another, an account; released one at a time")
    func gates() throws {
        let (store, home) = try makeStore()
        let phone = try store.addAccount(name: "phone", webdavURL: "http://127.0.0.1:1/dav/p/", tusURL: "http://127.0.0.1:1/files/", username: "p", wifiOnly: true)
        let cam = try photos(store, home, rule: "cam", 0..<3)
        let flagged = try photos(store, phone, rule: nil, 0..<3)
        let manual = try store.enqueue([NewTransfer(direction: .upload, origin: .manual, accountID: phone.id, localPath: LocalPath("/h/x.jpg"),
                                                    remotePath: "/x.jpg", bytesTotal: 1)])
        try store.hold(.rule("cam", account: home.id), reason: Self.battery)
        try store.hold(.wifiFlag(account: phone.id), reason: Reason(.wifi))
        #expect(try ready(store) == manual, "the Wi-Fi flag holds instant uploads only")
        try store.hold(.account(phone.id), reason: Reason(.credentials))
        #expect(try ready(store).isEmpty)
        #expect(Set(try store.heldScopes()) == [.rule("cam", account: home.id), .wifiFlag(account: phone.id), .account(phone.id)])

        try store.release(.account(phone.id))
        #expect(try ready(store) == manual, "the rows the Wi-Fi flag marked first stay its own")
        try store.release(.wifiFlag(account: phone.id))
        #expect(try ready(store) == manual + flagged, "hand-made work first")
        try store.release(.rule("cam", account: home.id))
        #expect(try ready(store) == manual + cam + flagged)
    }

    @Test("a gate of the whole queue writes over a held row's reason and clears it; the gate's reason comes back")
    func restated() throws {
        let (store, account) = try makeStore()
        let held = try photos(store, account, rule: "cam", 0..<20)
        let scope = QueueStore.HoldScope.rule("cam", account: account.id)
        try store.hold(scope, reason: Self.battery)
        try store.pauseAllWaiting(reason: Reason(.offline))
        #expect(try reasons(store, held) == [.offline])
        try store.clearWaiting(code: .offline)
        #expect(try reasons(store, held) == [nil])
        #expect(try ready(store).isEmpty, "still held")
        try store.restate(scope, reason: Self.battery)
        #expect(try reasons(store, held) == [.battery])
        #expect(try store.transfer(id: held[0])?.reason?.message.contains("BAT0") == true)
        // The gate's own reason changed.
        try store.restate(scope, reason: Reason(.wifi))
        #expect(try reasons(store, held) == [.wifi])
    }

    @Test("what the person does to a held row goes first: paused and resumed it is met again, sent with --now or retried it is ready")
    func person() throws {
        let (store, account) = try makeStore()
        let held = try photos(store, account, rule: "cam", 0..<4)
        try store.hold(.rule("cam", account: account.id), reason: Self.battery)
        _ = try store.pause([held[0]])
        _ = try store.resume([held[0]])
        try store.setIgnoreRules([held[1]])
        #expect(try ready(store) == [held[0], held[1]])

        // A retrying row of the gate whose time has come is held with the rest.
        try store.start(held[0], resumedAt: 0)
        try store.retryLater(held[0], reason: Reason(.timeout), at: 0, attempts: 1)
        try store.hold(.rule("cam", account: account.id), reason: Self.battery)
        #expect(try store.transfer(id: held[0])?.state == .queued)
        #expect(try ready(store) == [held[1]])
        // Failed and retried by the person: ready, whatever the mark it had.
        try store.start(held[1], resumedAt: 0)
        try store.fail(held[1], reason: Reason(.auth))
        try store.retry([held[1]])
        #expect(try ready(store) == [held[1]])
    }

    @Test("a server that cannot be reached: its failed rows stay retrying until the account's wait ends, and one held row at a time is let go to try it")
    func unreachable() throws {
        let (store, account) = try makeStore()
        let rows = try photos(store, account, rule: nil, 0..<5)
        try store.start(rows[0], resumedAt: 0)
        try store.retryLater(rows[0], reason: Reason(.unreachable), at: 0, attempts: 1)
        let until = nowMilliseconds() + 60_000
        let scope = QueueStore.HoldScope.account(account.id)
        try store.hold(scope, reason: Reason(.unreachable, "cannot reach the server; waiting until it answers"), dueRetrying: .postponed(until: until))
        let failed = try #require(try store.transfer(id: rows[0]))
        #expect(failed.state == .retrying && failed.nextAttemptAt == until && failed.attempts == 1)
        #expect(try ready(store).isEmpty)
        #expect(try reasons(store, Array(rows.dropFirst())) == [.unreachable])
        try store.releaseOne(scope)
        #expect(try ready(store) == [rows[1]], "the oldest")
        try store.releaseOne(scope)
        #expect(try ready(store) == [rows[1], rows[2]])
    }

    @Test("a mark names its gate: rule names with colons read back; marks this version does not know are lifted")
    func keys() throws {
        for scope: QueueStore.HoldScope in [.account(7), .wifiFlag(account: 3), .rule("cam", account: 1), .rule("a:b:c", account: 12), .rule("", account: 2)] {
            #expect(QueueStore.HoldScope(key: scope.key) == scope)
        }
        for key in ["", "account", "account:x", "account:1:2", "wifi:", "rule:1", "gate:1", "rule:x:cam"] {
            #expect(QueueStore.HoldScope(key: key) == nil, "\(key)")
        }
        let (store, account) = try makeStore()
        let rows = try photos(store, account, rule: "cam", 0..<2)
        try store.database.run("UPDATE transfers SET held_by = 'gate-of-a-later-version:1' WHERE id = ?", [.int(rows[0])])
        #expect(try ready(store) == [rows[1]])
        #expect(try store.heldScopes().isEmpty)
        #expect(try ready(store) == rows)
    }
}
