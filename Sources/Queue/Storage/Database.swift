import CSQLite
import Glibc
import Platform

/// One SQLite connection, which threads may share. Owns the `sqlite3*`.
///
/// Each statement, and each transaction from its `BEGIN` to its `COMMIT`, has the connection
/// to itself (a lock a thread may take again inside what it holds), so one thread's
/// statements never join another's transaction. Sharing is what keeps a page cache warm:
/// SQLite throws a connection's cached pages away whenever another connection committed,
/// so the agent's scheduler, on a connection of its own, read most of its pages again from
/// the file on every pass, after each transfer's writes.
public final class Database: @unchecked Sendable {
    // Sendable by construction: the handle and the mutable state (the statement cache, the
    // transaction's depth and flags) are reached only in `turn`; the rest never changes.
    let handle: OpaquePointer
    /// The connection's own turn, waited for no longer than the busy timeout.
    private let turn = TimedTurn()
    public let path: String
    /// This process's turn to write to the file (see `WriterTurn`).
    private let writerTurn: WriterTurn
    /// How long a write waits for the database in all, in seconds.
    private let busyTimeout: Double

    /// Before the process's first connection: SQLite sets aside 20 pages of cache (80 kB)
    /// for each connection as it opens, touched at once, where the agent's three connections
    /// to a small queue read a few pages each.
    private static let configureSQLite: Void = { _ = csqlite_no_initial_page_cache() }()

    /// Opens (creating if needed) the database in WAL mode with extended result codes,
    /// a busy timeout and foreign keys on.
    public init(path: String, busyTimeoutMilliseconds: Int32 = 10_000) throws(DatabaseError) {
        Self.configureSQLite
        self.path = path
        busyTimeout = Double(busyTimeoutMilliseconds) / 1000
        writerTurn = WriterTurn.forFile(path)
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw DatabaseError(code: rc, message: message, path: path)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        // Reading the schema proves the file is a database at all (SQLITE_NOTADB otherwise)
        // without changing a byte of it. Should it fail, the deinitializer closes the
        // connection (it runs for an object whose properties are all set).
        _ = try query("SELECT count(*) FROM sqlite_master") { _ in () }
        try execute("PRAGMA foreign_keys=ON")
    }

    /// Runs `body` with the connection to itself, waiting for it no longer than the busy
    /// timeout (as SQLite waits for another program): busy when it did not come in time. A
    /// thread that holds the connection while another program holds the database never
    /// makes the others wait for more than their own timeout. `body` is told how much of
    /// the timeout is left for the rest of its waiting.
    private func alone<T>(_ body: (_ secondsLeft: Double) throws(DatabaseError) -> T) throws(DatabaseError) -> T {
        guard let value = try turn.run(waitingAtMost: busyTimeout, body) else { throw connectionBusy }
        return value
    }

    /// As `alone`, for a body that may throw any error (a transaction's).
    private func aloneThrowingAny<T>(_ body: (_ secondsLeft: Double) throws -> T) throws -> T {
        guard let value = try turn.run(waitingAtMost: busyTimeout, body) else { throw connectionBusy }
        return value
    }

    private var connectionBusy: DatabaseError {
        DatabaseError(code: SQLITE_BUSY, message: "database is locked (another thread of this agent held the connection)", path: path)
    }

    /// WAL lets readers and one writer work at once; set only on a file known to be ours.
    /// Commits are then not flushed one by one (`synchronous=NORMAL`): a crash keeps the
    /// database whole but may lose the last commits, which is right for progress and
    /// wrong for what a person hands over (see `transaction(durable:)`).
    public func enableWAL() throws(DatabaseError) {
        _ = try query("PRAGMA journal_mode=WAL") { _ in () }
        try execute("PRAGMA synchronous=NORMAL")
        walEnabled = true
    }

    private var walEnabled = false

    /// Prepared statements by their SQL: a statement that runs for every transfer (or every
    /// progress checkpoint) is prepared once per connection, then reset and bound again.
    private var statements: [String: Statement] = [:]
    /// Beyond this many different statements the cache starts over (SQL built with lists of
    /// varying length would otherwise grow it without end).
    private static let statementCacheSize = 64

    deinit {
        statements.removeAll() // finalized before the connection closes
        sqlite3_close_v2(handle)
    }

    /// A statement for `sql`, from the cache when it is there and not in use (a query run
    /// from inside another's row handler with the same SQL gets a fresh one).
    private func prepared(_ sql: String) throws(DatabaseError) -> Statement {
        try checkTransactionOpen()
        return try cached(sql, explained: Self.explainsPlans)
    }

    /// Runs a statement of transaction control (`BEGIN IMMEDIATE`, `COMMIT`, a savepoint),
    /// prepared once like any other: a pass of the scheduler begins and ends a transaction and
    /// a few savepoints, and `sqlite3_exec` parsed each of them again every time.
    private func control(_ sql: String) throws(DatabaseError) {
        let statement = try cached(sql, explained: false)
        defer { statement.finish() }
        while try statement.step() {}
    }

    private func cached(_ sql: String, explained: Bool) throws(DatabaseError) -> Statement {
        if let cached = statements[sql], !cached.inUse {
            cached.inUse = true
            return cached
        }
        let statement = try Statement(self, sql)
        if explained { explain(sql) }
        if statements[sql] == nil {
            if statements.count >= Self.statementCacheSize { statements.removeAll() }
            statements[sql] = statement
        }
        statement.inUse = true
        return statement
    }

    /// With `INSTANT_UPLOAD_EXPLAIN` set in the environment, each statement's query plan is
    /// written to standard error when it is first prepared (`scripts/bench_queue.py` shows
    /// those of `status` and `queue` this way).
    static let explainsPlans = getenv("INSTANT_UPLOAD_EXPLAIN") != nil

    private func explain(_ sql: String) {
        guard let plan = try? Statement(self, "EXPLAIN QUERY PLAN " + sql) else { return }
        var lines = ["query plan: " + sql.split(whereSeparator: \.isNewline).map { $0.trimmingBlanks() }.joined(separator: " ")]
        while (try? plan.step()) == true {
            lines.append("    " + Row(statement: plan).text(3))
        }
        StandardStreams.writeError(lines.joined(separator: "\n") + "\n")
    }

    func error(_ rc: Int32) -> DatabaseError {
        let error = DatabaseError(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)), path: path,
                                  systemErrno: sqlite3_system_errno(handle))
        if transactionDepth > 0, endedBy == nil, sqlite3_get_autocommit(handle) != 0 { endedBy = error }
        return error
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws(DatabaseError) {
        try alone { _ throws(DatabaseError) in
            let rc = sqlite3_exec(handle, sql, nil, nil, nil)
            guard rc == SQLITE_OK else { throw error(rc) }
        }
    }

    /// Prepares `sql`, binds `arguments`, steps through every row.
    @discardableResult
    public func query<T>(_ sql: String, _ arguments: [SQLValue] = [], row: (Row) throws -> T) throws(DatabaseError) -> [T] {
        try alone { _ throws(DatabaseError) -> [T] in try queryAlone(sql, arguments, row: row) }
    }

    private func queryAlone<T>(_ sql: String, _ arguments: [SQLValue], row: (Row) throws -> T) throws(DatabaseError) -> [T] {
        let statement = try prepared(sql)
        defer { statement.finish() }
        try statement.bind(arguments)
        var results: [T] = []
        while try statement.step() {
            do { results.append(try row(Row(statement: statement))) } catch let e as DatabaseError { throw e } catch {
                throw DatabaseError(code: SQLITE_MISMATCH, message: "\(error)", path: path)
            }
        }
        return results
    }

    /// Runs a statement that changes rows and returns how many it changed. Outside a
    /// transaction it waits for this process's turn to write first.
    @discardableResult
    public func run(_ sql: String, _ arguments: [SQLValue] = []) throws(DatabaseError) -> Int {
        try alone { left throws(DatabaseError) -> Int in try runAlone(sql, arguments, within: left) }
    }

    private func runAlone(_ sql: String, _ arguments: [SQLValue], within budget: Double) throws(DatabaseError) -> Int {
        let statement = try prepared(sql)
        defer { statement.finish() }
        try statement.bind(arguments)
        if transactionDepth == 0 && sqlite3_stmt_readonly(statement.pointer) == 0 {
            do { try inWriterTurn(within: budget) { while try statement.step() {} } } catch let error as DatabaseError { throw error } catch {
                throw DatabaseError(code: SQLITE_ERROR, message: "\(error)", path: path)
            }
        } else {
            while try statement.step() {}
        }
        return Int(sqlite3_changes(handle))
    }

    /// The row the last insert made; read it inside the transaction that inserted.
    public var lastInsertRowID: Int64 { turn.run { sqlite3_last_insert_rowid(handle) } }

    private var transactionDepth = 0

    /// Runs `body` in a write transaction taken up front (`BEGIN IMMEDIATE`), so that two
    /// processes never deadlock upgrading read locks; the busy timeout waits for the other,
    /// and another thread of this process waits for its turn (`WriterTurn`) before it begins.
    /// Nested calls become savepoints inside the outer transaction.
    ///
    /// `durable`: the WAL is flushed to the disk before this returns, so what a person was
    /// told is queued survives a power cut. The flush happens after the commit, out of the
    /// turn to write, shared with the other durable commits of the moment (`LogFlush`). A
    /// nested call that asks for it makes the outer transaction durable: its changes are
    /// committed only with the outer ones.
    ///
    /// Should SQLite end the transaction by itself (it may after a full disk or an I/O
    /// error, even when the caller caught that error and went on), every later statement
    /// inside it fails with that error rather than run and commit on its own.
    public func transaction<T>(durable: Bool = false, _ body: () throws -> T) throws -> T {
        let (value, owed) = try committing(durable: durable, body)
        // Out of the connection's turn: its other users go on meanwhile.
        if owed { try flushLog() }
        return value
    }

    /// Runs `body`'s reads in one read transaction, so that all of them see the queue at one
    /// moment, whatever the agent commits meanwhile: figures added up from several queries
    /// (`status`: the counts per state, then the reasons of the retrying ones) must agree.
    /// Inside a transaction or snapshot already, `body` just runs in it. Reads only: SQLite
    /// refuses a write inside (`query_only`), which would otherwise turn the snapshot into a
    /// write transaction taken without this process's turn to write. Keep it short: the log
    /// cannot be checkpointed past it while it lasts.
    public func snapshot<T>(_ body: () throws -> T) throws -> T {
        try aloneThrowingAny { _ throws -> T in
            guard sqlite3_get_autocommit(handle) != 0 else { return try body() }
            try control("PRAGMA query_only = 1")
            defer { try? control("PRAGMA query_only = 0") }
            try control("BEGIN")
            do {
                let value = try body()
                try control("COMMIT")
                return value
            } catch {
                try? control("ROLLBACK")
                throw error
            }
        }
    }

    /// A transaction as `transaction`, whose flush (when a durable write inside asked for
    /// one) is left to the caller: true when one is owed. So the caller can tell a commit
    /// that failed (this throws) from one that is made but did not reach the disk
    /// (`flushLog()` throws).
    public func transactionOwingFlush(_ body: () throws -> Void) throws -> Bool {
        try committing(durable: false, body).flushOwed
    }

    private func committing<T>(durable: Bool, _ body: () throws -> T) throws -> (value: T, flushOwed: Bool) {
        try aloneThrowingAny { left throws -> (T, Bool) in
            guard transactionDepth == 0 else {
                let value = try transactionBody(body)
                if durable { outerIsDurable = true }
                return (value, false)
            }
            outerIsDurable = durable
            endedBy = nil
            let value = try inWriterTurn(within: left) { try transactionBody(body) }
            return (value, outerIsDurable)
        }
    }

    /// Whether the outermost transaction flushes the log once committed.
    private var outerIsDurable = false
    /// The error after which SQLite rolled back the open transaction by itself.
    private var endedBy: DatabaseError?

    /// Throws when a transaction is open in name only: SQLite rolled it back after an error.
    private func checkTransactionOpen() throws(DatabaseError) {
        guard transactionDepth > 0, sqlite3_get_autocommit(handle) != 0 else { return }
        throw endedBy ?? DatabaseError(code: SQLITE_ABORT, message: "the transaction was rolled back", path: path)
    }

    /// Brings this connection's commits so far to the disk, as a durable transaction does
    /// after its commit; for a caller that learns only from the transaction whether it must.
    /// Inside a transaction of the calling thread, the flush is owed by that transaction's
    /// commit instead: the changes are not committed yet, and the thread holds the connection
    /// that another thread's flush may be waiting for.
    public func flushLog() throws(DatabaseError) {
        let owedByTransaction = turn.ifHeldHere { () -> Bool in
            guard transactionDepth > 0 else { return false }
            outerIsDurable = true
            return true
        }
        if owedByTransaction == true { return }
        guard walEnabled, let failed = writerTurn.logFlush.commitMade(flush: syncLog) else { return }
        throw DatabaseError(code: SQLITE_IOERR | (4 << 8), // SQLITE_IOERR_FSYNC
                            message: "the queue's changes could not be flushed to the disk: \(String(cString: strerror(failed)))",
                            path: path, systemErrno: failed)
    }

    /// Syncs this connection's write-ahead log to the disk through SQLite's own file layer,
    /// as a `synchronous=FULL` commit would; the errno when that failed.
    /// The log file's handle is read in the connection's turn, the sync runs outside it: the
    /// log stays open while the connection is, and a sync only reads the file's descriptor.
    private func syncLog() -> Int32? {
        let file = turn.run { () -> UnsafeMutablePointer<sqlite3_file>? in
            var file: UnsafeMutablePointer<sqlite3_file>?
            guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file) == SQLITE_OK else { return nil }
            return file
        }
        guard let file, let sync = file.pointee.pMethods?.pointee.xSync else { return EIO }
        let saved = errno
        errno = 0
        guard sync(file, SQLITE_SYNC_NORMAL) == SQLITE_OK else {
            let failed = errno
            errno = saved
            return failed != 0 ? failed : EIO
        }
        errno = saved
        return nil
    }

    /// Runs `body` in this process's turn to write, within what is left of the busy timeout
    /// (`budget`, after the wait for the connection): SQLite waits for another program only
    /// as long as the waits for the turns left, so a write never waits longer than the
    /// timeout in all. Busy when the turn did not come in time, as SQLite itself would have said.
    private func inWriterTurn<T>(within budget: Double, _ body: () throws -> T) throws -> T {
        let result = try writerTurn.run(waitingAtMost: budget) { left -> T in
            let shortened = left < busyTimeout - 0.001
            if shortened { sqlite3_busy_timeout(handle, max(1, Int32(saturating: left * 1000))) }
            defer { if shortened { sqlite3_busy_timeout(handle, Int32(saturating: busyTimeout * 1000)) } }
            return try body()
        }
        guard let result else {
            throw DatabaseError(code: SQLITE_BUSY, message: "database is locked (another thread of this agent waited for it)", path: path)
        }
        return result
    }

    private func transactionBody<T>(_ body: () throws -> T) throws -> T {
        let nested = transactionDepth > 0
        try checkTransactionOpen()
        try control(nested ? "SAVEPOINT nested" : "BEGIN IMMEDIATE")
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        do {
            let value = try body()
            try checkTransactionOpen()
            try control(nested ? "RELEASE nested" : "COMMIT")
            return value
        } catch {
            if nested {
                try? control("ROLLBACK TO nested")
                try? control("RELEASE nested")
            } else {
                try? control("ROLLBACK")
            }
            throw error
        }
    }

    public var userVersion: Int {
        get throws(DatabaseError) { try query("PRAGMA user_version") { $0.int(0) }.first ?? 0 }
    }
}
