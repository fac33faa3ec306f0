import Foundation
import Platform
@testable import Queue
import TestSupport
import Testing

/// Numbers and names: an item keeps its number for good, and rows are read by the names
/// of their columns, whatever order a query lists them in.
@Suite("Item numbers and columns")
struct IdentityTests {
    let folder = TemporaryFolder("iu-identity")
    var path: String { folder.path + "/state/queue.sqlite3" }

    func upload(_ accountID: Int64, _ name: String) -> NewTransfer {
        NewTransfer(direction: .upload, origin: .manual, accountID: accountID, localPath: LocalPath("/tmp/\(name)"),
                    remotePath: "/Photos/\(name)", bytesTotal: 10)
    }

    @Test("an item's number is never given out again, even after everything was cleared")
    func numbersAreNeverReused() throws {
        let store = try QueueStore(path: path)
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        let first = try store.enqueue((0..<3).map { upload(account.id, "\($0).jpg") })
        for id in first {
            try store.start(id, resumedAt: 0)
            try store.complete(id, sha256: nil, bytes: 10)
        }
        #expect(try store.clear(.all) == 3)
        #expect(try store.transfers().isEmpty)
        let next = try store.enqueue([upload(account.id, "later.jpg")])
        #expect(next[0] > first.max()!, "number \(next[0]) was given out before (\(first))")
    }

    @Test("moving a schema 3 queue to permanent numbers keeps every row, column and index")
    func migrationKeepsEverything() throws {
        try FileManager.default.createDirectory(atPath: folder.path + "/state", withIntermediateDirectories: true)
        do {
            let old = try Database(path: path)
            try old.enableWAL()
            for sql in Schema.migrations.prefix(3) { try old.execute(sql) }
            try old.execute("PRAGMA user_version = 3")
            try old.execute("INSERT INTO accounts (id, name, webdav_url, tus_url, username, wifi_only, created_at, ca_file) VALUES (7, 'home', 'http://h/dav/', 'http://h/files/', 'u', 1, 5, '/ca.pem')")
            try old.execute("""
                INSERT INTO transfers (id, direction, origin, lane, account_id, local_path, remote_path, state, reason_code, reason_message,
                    reason_action, reason_detail, attempts, next_attempt_at, bytes_done, bytes_total, upload_url, upload_expires_at,
                    fp_device, fp_inode, fp_size, fp_mtime_ns, checkpoint_offset, hash_state, sha256, etag, cancel_requested,
                    ignore_rules, watch_rule, resumed_at, bytes_read, bytes_hashed, created_at, started_at, completed_at)
                VALUES (3, 'upload', 'auto', 1, 7, x'2f746d702fe9', '/P/a.jpg', 'retrying', 'timeout', 'slow', 'wait', 'curl 28', 4, 99,
                        10, 20, 'http://h/files/x', 1234, 1, 2, 20, 3, 10, x'0102', NULL, '"e"', 0, 1, 'camera', 5, 6, 7, 8, 9, NULL),
                       (41, 'download', 'manual', 0, 7, x'', '/D/b.pdf', 'completed', NULL, NULL, NULL, NULL, 0, NULL,
                        30, 30, NULL, NULL, NULL, NULL, NULL, NULL, 30, NULL, 'abc', NULL, 0, 0, NULL, 0, 30, 30, 11, 12, 13)
                """)
        }
        // The columns schema 3 had; later migrations add their own.
        let columns = try Database(path: path).query("PRAGMA table_info(transfers)") { try $0.text("name") }
        let before = try Self.dump(path, columns)
        let store = try QueueStore(path: path)
        #expect(try store.database.userVersion == Schema.latest)
        #expect(try Self.dump(path, columns) == before, "every row and column survives")
        let indexes = Set(try store.database.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'transfers'") { $0.text(0) })
        #expect(indexes.isSuperset(of: ["transfers_by_state", "transfers_completed", "transfers_by_watch_rule"]), "\(indexes)")
        #expect(indexes.isDisjoint(with: ["transfers_by_state_lane", "transfers_by_state_completed"]), "\(indexes)")
        #expect(try store.database.query("SELECT sql FROM sqlite_master WHERE name = 'transfers'") { $0.text(0) }.first?.contains("AUTOINCREMENT") == true)
        let row = try #require(try store.transfer(id: 3))
        #expect(row.state == .retrying && row.reason?.detail == "curl 28" && row.watchRule == "camera" && row.accountName == "home")
        // Numbers continue after the highest one kept, and never come back after a clear.
        try store.clear(.completed)
        #expect(try store.enqueue([upload(7, "new.jpg")])[0] == 42)
    }

    /// Every row of transfers, each of `columns`, as text.
    static func dump(_ path: String, _ columns: [String]) throws -> [[String]] {
        let db = try Database(path: path)
        return try db.query("SELECT * FROM transfers ORDER BY id") { r in
            try columns.map { name in
                try r.isNull(name) ? "NULL" : (try r.blob(name)).map { String($0) }.joined(separator: ",")
            }
        }
    }

    @Test("a transfer and an account read the same whatever order the query lists their columns in")
    func rowsAreReadByName() throws {
        let store = try QueueStore(path: path)
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/",
                                           username: "a", wifiOnly: true, caFile: "/ca.pem")
        let id = try store.enqueue([upload(account.id, "a.jpg")])[0]
        try store.start(id, resumedAt: 0)
        try store.checkpoint(id, offset: 5, hashState: [9, 8], counters: ResumeCounters(resumedAt: 1, bytesRead: 2, bytesHashed: 3), resetAttempts: false)
        try store.retryLater(id, reason: Reason(.timeout, "slow", detail: "curl 28"), at: 77, attempts: 2)
        let expected = try #require(try store.transfer(id: id))

        let reversed = QueueStore.columns.components(separatedBy: ", ").reversed().joined(separator: ", ")
        let read = try store.database.query("SELECT \(reversed) FROM transfers t JOIN accounts a ON a.id = t.account_id WHERE t.id = ?",
                                            [.int(id)], row: QueueStore.transfer)
        #expect(read == [expected])

        let accountColumns = QueueStore.accountColumns.components(separatedBy: ", ").reversed().joined(separator: ", ")
        #expect(try store.database.query("SELECT \(accountColumns) FROM accounts", row: QueueStore.account) == [account])
    }

    @Test("a column a query does not have is an error, not another column's value")
    func missingColumnIsAnError() throws {
        let store = try QueueStore(path: path)
        _ = try store.addAccount(name: "home", webdavURL: "http://h/dav/", tusURL: "http://h/files/", username: "a")
        #expect(throws: DatabaseError.self) { try store.database.query("SELECT id, name FROM accounts", row: QueueStore.account) }
    }
}
