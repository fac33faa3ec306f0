import Foundation
import Platform
import Queue
import TestSupport
import Testing

/// The running tally (`transfer_tally`) must always say what counting the rows says: the
/// status line and the batch figures read nothing else.
@Suite("The queue's running tally")
struct TallyTests {
    let folder = TemporaryFolder("iu-tally")
    var path: String { folder.path + "/queue.sqlite3" }

    /// What the tally should hold, counted from the rows themselves.
    func counted(_ store: QueueStore, from low: Int64, below high: Int64?, states: [TransferState]?) throws -> QueueStore.RowSums {
        var sql = """
            SELECT count(*), coalesce(sum(state = 'completed'), 0), coalesce(sum(bytes_total), 0), coalesce(sum(bytes_done), 0),
                   coalesce(sum(CASE WHEN state = 'failed' THEN max(bytes_total - bytes_done, 0) ELSE 0 END), 0)
            FROM transfers WHERE id >= \(low)
            """
        if let high { sql += " AND id < \(high)" }
        if let states { sql += " AND state IN (" + states.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ")" }
        return try store.database.query(sql) { r in
            QueueStore.RowSums(files: r.int(0), completed: r.int(1), bytesTotal: r.int64(2), bytesDone: r.int64(3), bytesLeftFailed: r.int64(4))
        }[0]
    }

    func expectAgrees(_ store: QueueStore, _ step: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let maxID = try store.database.query("SELECT coalesce(max(id), 0) FROM transfers") { $0.int64(0) }[0]
        // Ranges that start and end inside buckets, on their edges, and past the end.
        let edges: [Int64] = [0, 1, 1023, 1024, 1025, 2047, 2048, 2500, maxID, maxID + 1, 5000]
        for low in edges {
            for high in [nil] + edges.map(Optional.some) {
                for states in [nil, TransferState.unfinished, [.failed]] {
                    #expect(try store.sums(idsFrom: low, below: high, states: states) == counted(store, from: low, below: high, states: states),
                            "\(step): ids \(low)..<\(high.map(String.init) ?? "end") in \(states?.map(\.rawValue) ?? ["any"])", sourceLocation: sourceLocation)
                }
            }
        }
        let summary = try store.summary()
        for direction in Direction.allCases {
            for state in TransferState.allCases {
                let rows = try store.database.query("SELECT count(*) FROM transfers WHERE direction = ? AND state = ?",
                                                    [.text(direction.rawValue), .text(state.rawValue)]) { $0.int(0) }[0]
                #expect(summary.count(state, direction) == rows, "\(step): \(direction) \(state)", sourceLocation: sourceLocation)
            }
        }
        let waiting = try store.database.query("SELECT reason_code, count(*) FROM transfers WHERE state = 'queued' AND paused = 0 GROUP BY reason_code") {
            ($0.optionalText(0).map { ReasonCode(rawValue: $0) ?? .protocol }, $0.int(1))
        }
        #expect(try store.reasonCounts(.queued, countingPaused: false) == Dictionary(waiting, uniquingKeysWith: +), "\(step)", sourceLocation: sourceLocation)
    }

    @Test("after every kind of change (queued, started, progress, failed, retried, paused, completed, cleared) the tally counts what the rows say, across buckets")
    func agreesWithTheRows() throws {
        let store = try QueueStore(path: path)
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: nil, username: "a")
        let ids = try store.enqueue((0..<2600).map { i in
            NewTransfer(direction: i % 5 == 0 ? .download : .upload, origin: .manual, accountID: account.id,
                        localPath: LocalPath("/tmp/f\(i).jpg"), remotePath: "/Photos/f\(i).jpg", bytesTotal: Int64(1000 + i))
        })
        try expectAgrees(store, "queued")
        for id in ids where id % 3 == 0 { _ = try store.start(id, resumedAt: 0) }
        for id in ids where id % 3 == 0 && id % 2 == 0 { try store.progress(id, bytesDone: 500) }
        try expectAgrees(store, "started, half of them part way")
        // Uploads about to make their files: most keep the name and the size they were
        // queued with (the tally has nothing to change), some were renamed or grew.
        for id in ids where id % 3 == 0 && id % 5 == 2 {
            let renamed = id % 2 == 0
            let queued = try #require(try store.transfer(id: id))
            #expect(queued.direction == .upload)
            let grown = id % 4 == 1
            let bytes = queued.bytesTotal + (grown ? 77 : 0)
            let changesBefore = try store.database.query("SELECT total_changes()") { $0.int(0) }[0]
            #expect(try store.recordFinishing(id, remotePath: renamed ? "/Photos/renamed-\(id).jpg" : "/Photos/f\(id - 1).jpg",
                                              bytes: bytes, sha256: nil, durable: false))
            // Rows written, the triggers' included: the row itself, and the tally only when it
            // has something to count (a row taken out and one put back).
            let written = try store.database.query("SELECT total_changes()") { $0.int(0) }[0] - changesBefore
            #expect(written == 1 + (renamed ? 1 : 0) + (grown ? 2 : 0), "row \(id), renamed \(renamed), grown \(grown)")
            let row = try #require(try store.transfer(id: id))
            #expect(row.finishing && row.bytesTotal == bytes && row.remotePath == (renamed ? "/Photos/renamed-\(id).jpg" : "/Photos/f\(id - 1).jpg"))
        }
        try expectAgrees(store, "files about to be made recorded, some renamed or grown")
        for id in ids where id % 3 == 0 && id % 7 == 0 { try store.fail(id, reason: Reason(.serverError, "the server failed")) }
        for id in ids where id % 3 == 0 && id % 11 == 0 && id % 7 != 0 {
            try store.retryLater(id, reason: Reason(.timeout), at: nowMilliseconds() + 60_000, attempts: 1)
        }
        _ = try store.pause(ids.filter { $0 % 3 == 1 && $0 % 4 == 0 })
        try expectAgrees(store, "failed, retrying, paused")
        for id in ids where id % 3 == 0 && id % 7 != 0 && id % 11 != 0 {
            try store.complete(id, sha256: nil, bytes: 1000 + id - 1)
        }
        try store.pauseAllWaiting(reason: Reason(.offline))
        try expectAgrees(store, "completed, the rest held offline")
        _ = try store.retry(try store.failedIDs())
        try store.clearWaiting(code: .offline)
        try expectAgrees(store, "failed ones retried, offline cleared")
        _ = try store.clear(.completed)
        try expectAgrees(store, "finished cleared")
        #expect(try store.database.query("SELECT count(*) FROM transfers WHERE state = 'completed'") { $0.int(0) } == [0])
    }

    @Test("a queue from before the tally gets one that counts its rows")
    func migration() throws {
        do {
            let store = try QueueStore(path: path)
            let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: nil, username: "a")
            let ids = try store.enqueue((0..<1500).map { i in
                NewTransfer(direction: .upload, origin: .auto, accountID: account.id, localPath: LocalPath("/tmp/f\(i).jpg"),
                            remotePath: "/Photos/f\(i).jpg", bytesTotal: Int64(i))
            })
            for id in ids.prefix(700) { _ = try store.start(id, resumedAt: 0); try store.complete(id, sha256: nil, bytes: id - 1) }
            // As a program from before the tally left it.
            try store.database.execute("""
                DROP TRIGGER transfer_tally_insert; DROP TRIGGER transfer_tally_update; DROP TRIGGER transfer_tally_delete;
                DROP TABLE transfer_tally; DROP INDEX transfers_cancel_requested;
                DROP INDEX transfers_completed; CREATE INDEX transfers_by_state_completed ON transfers (state, completed_at, id);
                CREATE INDEX transfers_by_state_lane ON transfers (state, lane, id);
                DROP INDEX transfers_by_watch_rule; CREATE INDEX transfers_by_watch_rule ON transfers (watch_rule, state);
                DROP INDEX transfers_ready; DROP INDEX transfers_held; ALTER TABLE transfers DROP COLUMN held_by; DROP INDEX transfers_retrying;
                DROP TABLE mount_points; ALTER TABLE transfers DROP COLUMN queued_ctime_ns; ALTER TABLE watch_rules DROP COLUMN waiting;
                DROP INDEX transfers_taken_note; ALTER TABLE transfers DROP COLUMN taken_note;
                PRAGMA user_version = 11
                """)
        }
        let store = try QueueStore(path: path)
        #expect(try store.database.userVersion == Schema.latest)
        try expectAgrees(store, "migrated")
        #expect(try store.summary().count(.completed) == 700)
    }
}
