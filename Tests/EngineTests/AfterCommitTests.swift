@testable import Engine
import Queue
import TestSupport
import Testing

/// What a scheduling pass does outside the database waits for its commit: a transfer's
/// thread, a notice, a watch rule's step see the row as committed, or never run when the
/// commit did not happen.
@Suite("What waits for a pass's commit")
struct AfterCommitTests {
    let folder = TemporaryFolder("iu-after-commit")
    var path: String { folder.path + "/q.sqlite3" }

    func database() throws -> Database {
        let db = try Database(path: path)
        try db.enableWAL()
        try db.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY)")
        return db
    }

    @Test("once committed, what waited runs in the order it was asked, and another connection already sees the change")
    func runsAfterTheCommit() throws {
        let db = try database()
        let other = try Database(path: path)
        var seen: [String] = []
        try AfterCommit.transaction(on: db) { after in
            _ = try db.run("INSERT INTO t (id) VALUES (1)")
            after.onCommit { seen.append("first: \((try? other.query("SELECT count(*) FROM t") { $0.int(0) }) ?? [])") }
            after.onRollback { seen.append("undone") }
            after.onCommit { seen.append("second") }
        }
        #expect(seen == ["first: [1]", "second"])
    }

    @Test("when the transaction fails, only the undoing runs, and the error comes back")
    func undoesWhenRolledBack() throws {
        let db = try database()
        var seen: [String] = []
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try AfterCommit.transaction(on: db) { after in
                _ = try db.run("INSERT INTO t (id) VALUES (1)")
                after.onCommit { seen.append("told") }
                after.onRollback { seen.append("undone") }
                throw Refused()
            }
        }
        #expect(seen == ["undone"])
        #expect(try db.query("SELECT count(*) FROM t") { $0.int(0) } == [0])
    }

    @Test("a commit that fails after the body went through undoes as well")
    func undoesWhenTheCommitFails() throws {
        let db = try database()
        var seen: [String] = []
        #expect(throws: DatabaseError.self) {
            try AfterCommit.transaction(on: db) { after in
                _ = try db.run("INSERT INTO t (id) VALUES (1)")
                after.onCommit { seen.append("told") }
                after.onRollback { seen.append("undone") }
                try db.execute("ROLLBACK") // as SQLite does by itself after a full disk
            }
        }
        #expect(seen == ["undone"])
        #expect(try db.query("SELECT count(*) FROM t") { $0.int(0) } == [0])
    }
}
