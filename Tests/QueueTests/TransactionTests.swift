import Dispatch
import Glibc
import Platform
import Queue
import TestSupport
import Testing

/// A transaction is all or nothing, also when SQLite ends it by itself after an error the
/// caller caught and went on from (a full disk or an I/O error may do that): nothing after
/// it runs, and commits, on its own.
@Suite("Transactions")
struct TransactionTests {
    let folder = TemporaryFolder("iu-transactions")

    func database() throws -> Database {
        let db = try Database(path: folder.path + "/t.sqlite3")
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        return db
    }

    func ids(_ db: Database) throws -> [Int] { try db.query("SELECT id FROM t ORDER BY id") { $0.int(0) } }

    @Test("a savepoint that fails takes back only its own changes")
    func failedSavepoint() throws {
        let db = try database()
        try db.transaction {
            try db.run("INSERT INTO t (id) VALUES (1)")
            _ = try? db.transaction { () throws -> Void in
                try db.run("INSERT INTO t (id) VALUES (2)")
                try db.run("INSERT INTO t (id) VALUES (1)") // a duplicate key
            }
            try db.run("INSERT INTO t (id) VALUES (3)")
        }
        #expect(try ids(db) == [1, 3])
    }

    @Test("after SQLite rolled the transaction back, the statements and savepoints that follow fail, and the transaction fails with them")
    func endedTransactionRunsNothingMore() throws {
        let db = try database()
        var afterwards: [String] = []
        #expect(throws: DatabaseError.self) {
            try db.transaction {
                try db.run("INSERT INTO t (id) VALUES (1)")
                try db.execute("ROLLBACK") // as SQLite does by itself after some errors
                do { try db.run("INSERT INTO t (id) VALUES (2)") } catch { afterwards.append("insert") }
                do { _ = try db.transaction { try db.run("INSERT INTO t (id) VALUES (3)") } } catch { afterwards.append("savepoint") }
                do { _ = try db.query("SELECT 1") { $0.int(0) } } catch { afterwards.append("query") }
            }
        }
        #expect(afterwards == ["insert", "savepoint", "query"])
        #expect(try ids(db).isEmpty, "nothing was committed on its own")
        _ = try db.transaction { try db.run("INSERT INTO t (id) VALUES (4)") }
        #expect(try ids(db) == [4], "the next transaction works")
    }

    @Test("threads sharing a connection: a statement from one thread waits for another's transaction to end and is never part of it")
    func sharedConnectionKeepsTransactionsApart() throws {
        let db = try database()
        let inside = DispatchSemaphore(value: 0)
        let other = DispatchSemaphore(value: 0)
        let thread = try DedicatedThread {
            inside.wait()
            // While the first thread's transaction is open: this insert must wait for it.
            _ = try? db.run("INSERT INTO t (id) VALUES (2)")
            other.signal()
        }
        defer { thread.join() }
        struct Undone: Error {}
        #expect(throws: Undone.self) {
            try db.transaction {
                try db.run("INSERT INTO t (id) VALUES (1)")
                inside.signal()
                usleep(200_000)
                throw Undone()
            }
        }
        other.wait()
        #expect(try ids(db) == [2], "the other thread's insert was committed on its own, after the rollback")
    }

    @Test("a thread waits for a shared connection no longer than the busy timeout, and is told it is busy")
    func sharedConnectionWaitIsBounded() throws {
        let db = try Database(path: folder.path + "/t.sqlite3", busyTimeoutMilliseconds: 300)
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        let inside = DispatchSemaphore(value: 0)
        let answered = DispatchSemaphore(value: 0)
        let outcome = Locked<DatabaseError?>(nil)
        let thread = try DedicatedThread {
            inside.wait()
            do { _ = try db.query("SELECT count(*) FROM t") { $0.int(0) } } catch { outcome.withLock { $0 = error as? DatabaseError } }
            answered.signal()
        }
        defer { thread.join() }
        _ = try db.transaction { () throws -> Void in
            inside.signal()
            _ = answered.wait(timeout: .now() + 10) // held past the other thread's timeout
        }
        #expect(outcome.withLock { $0?.isBusy } == true, "\(String(describing: outcome.withLock { $0 }))")
    }

    @Test("a snapshot's reads all see one moment: a commit from another connection between them is not seen until it ends")
    func snapshotSeesOneMoment() throws {
        let db = try database()
        try db.enableWAL()
        try db.run("INSERT INTO t (id) VALUES (1)")
        let other = try Database(path: folder.path + "/t.sqlite3")
        let seen = try db.snapshot { () throws -> ([Int], [Int]) in
            let first = try ids(db)
            try other.run("INSERT INTO t (id) VALUES (2)")
            return (first, try ids(db))
        }
        #expect(seen.0 == [1] && seen.1 == [1])
        #expect(try ids(db) == [1, 2])
        // Inside a transaction or a snapshot, it is part of it.
        try db.transaction {
            try db.run("INSERT INTO t (id) VALUES (3)")
            #expect(try db.snapshot { try ids(db) } == [1, 2, 3])
        }
        #expect(try db.snapshot { try db.snapshot { try ids(db) } } == [1, 2, 3])
        // Reads only: a write inside fails, and the connection writes again once it ended.
        #expect(throws: DatabaseError.self) { try db.snapshot { try db.run("INSERT INTO t (id) VALUES (4)") } }
        try db.run("INSERT INTO t (id) VALUES (5)")
        #expect(try ids(db) == [1, 2, 3, 5])
    }
}
