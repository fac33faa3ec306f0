import Foundation
import Queue
import TestSupport
import Testing

/// The connection prepares a statement once and reuses it; the reuse must never change what
/// a query returns.
@Suite("Prepared statements, reused")
struct StatementCacheTests {
    let folder = TemporaryFolder("iu-statements")

    func database() throws -> Database {
        let db = try Database(path: folder.path + "/t.sqlite3")
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        return db
    }

    @Test("the same statement run again and again sees new bindings and new rows each time")
    func reusedWithNewBindings() throws {
        let db = try database()
        for i in 0..<200 { try db.run("INSERT INTO t (id, v) VALUES (?, ?)", [.int(i), .text("v\(i)")]) }
        for i in stride(from: 0, to: 200, by: 37) {
            #expect(try db.query("SELECT v FROM t WHERE id = ?", [.int(i)]) { $0.text(0) } == ["v\(i)"])
        }
        #expect(try db.query("SELECT count(*) FROM t") { $0.int(0) } == [200])
        try db.run("DELETE FROM t WHERE id >= ?", [.int(100)])
        #expect(try db.query("SELECT count(*) FROM t") { $0.int(0) } == [100], "a reused statement reads the table as it is now")
    }

    @Test("a query run from inside another's row handler, with the same SQL, gets a statement of its own")
    func nestedSameStatement() throws {
        let db = try database()
        for i in 0..<5 { try db.run("INSERT INTO t (id, v) VALUES (?, ?)", [.int(i), .text("v\(i)")]) }
        let sql = "SELECT id FROM t WHERE id >= ? ORDER BY id"
        let pairs = try db.query(sql, [.int(3)]) { outer in
            (outer.int(0), try db.query(sql, [.int(4)]) { $0.int(0) })
        }
        #expect(pairs.map(\.0) == [3, 4])
        #expect(pairs.map(\.1) == [[4], [4]])
        #expect(try db.query(sql, [.int(0)]) { $0.int(0) } == [0, 1, 2, 3, 4], "the cached statement is whole afterwards")
    }

    @Test("a statement that failed halfway is ready for the next run")
    func afterAFailure() throws {
        let db = try database()
        try db.run("INSERT INTO t (id, v) VALUES (?, ?)", [.int(1), .text("one")])
        #expect(throws: DatabaseError.self) { try db.run("INSERT INTO t (id, v) VALUES (?, ?)", [.int(1), .text("again")]) }
        try db.run("INSERT INTO t (id, v) VALUES (?, ?)", [.int(2), .text("two")])
        #expect(try db.query("SELECT v FROM t ORDER BY id") { $0.text(0) } == ["one", "two"])
    }

    @Test("more different statements than the cache keeps: every one still answers")
    func beyondTheCache() throws {
        let db = try database()
        for i in 0..<300 { try db.run("INSERT INTO t (id, v) VALUES (\(i), 'v\(i)')") }
        #expect(try db.query("SELECT count(*) FROM t") { $0.int(0) } == [300])
    }
}
