import CSQLite
import Foundation
import Glibc

/// An error from SQLite, with the extended result code and what was being done.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    public var code: Int32
    public var message: String
    public var path: String
    /// The errno of the system call that failed under SQLite, when one did (ENOSPC...).
    public var systemErrno: Int32 = 0

    public init(code: Int32, message: String, path: String, systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.path = path
        self.systemErrno = systemErrno
    }

    public var description: String { "\(message) (SQLite \(code), \(path))" }

    /// The file is not a database at all, or a damaged one.
    public var isCorrupt: Bool { code & 0xff == SQLITE_NOTADB || code & 0xff == SQLITE_CORRUPT }
    public var isBusy: Bool { code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED }
    /// The disk (or the user's quota on it) has no room: SQLite says FULL, or an I/O error
    /// underneath was ENOSPC/EDQUOT (a WAL index that cannot grow says IOERR_SHMSIZE).
    public var isDiskFull: Bool { code & 0xff == SQLITE_FULL || systemErrno == ENOSPC || systemErrno == EDQUOT }
    /// Worth asking again: another program holds the lock, the disk is full, or the I/O
    /// underneath failed this time.
    public var isTransient: Bool {
        isBusy || isDiskFull || [SQLITE_IOERR, SQLITE_PROTOCOL, SQLITE_NOMEM, SQLITE_INTERRUPT].contains(code & 0xff)
    }
}

/// One SQLite connection. Owns the `sqlite3*`; not Sendable: use it from one thread at a time.
public final class Database {
    let handle: OpaquePointer
    public let path: String

    /// Opens (creating if needed) the database in WAL mode with extended result codes,
    /// a busy timeout and foreign keys on.
    public init(path: String, busyTimeoutMilliseconds: Int32 = 10_000) throws(DatabaseError) {
        self.path = path
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
        do {
            // Reading the schema proves the file is a database at all (SQLITE_NOTADB otherwise)
            // without changing a byte of it.
            _ = try query("SELECT count(*) FROM sqlite_master") { _ in () }
            try execute("PRAGMA foreign_keys=ON")
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
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
        if let cached = statements[sql], !cached.inUse {
            cached.inUse = true
            return cached
        }
        let statement = try Statement(self, sql)
        if statements[sql] == nil {
            if statements.count >= Self.statementCacheSize { statements.removeAll() }
            statements[sql] = statement
        }
        statement.inUse = true
        return statement
    }

    func error(_ rc: Int32) -> DatabaseError {
        DatabaseError(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)), path: path,
                      systemErrno: sqlite3_system_errno(handle))
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws(DatabaseError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    /// Prepares `sql`, binds `arguments`, steps through every row.
    @discardableResult
    public func query<T>(_ sql: String, _ arguments: [SQLValue] = [], row: (Row) throws -> T) throws(DatabaseError) -> [T] {
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

    /// Runs a statement that changes rows and returns how many it changed.
    @discardableResult
    public func run(_ sql: String, _ arguments: [SQLValue] = []) throws(DatabaseError) -> Int {
        let statement = try prepared(sql)
        defer { statement.finish() }
        try statement.bind(arguments)
        while try statement.step() {}
        return Int(sqlite3_changes(handle))
    }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    private var transactionDepth = 0

    /// Runs `body` in a write transaction taken up front (`BEGIN IMMEDIATE`), so that two
    /// processes never deadlock upgrading read locks; the busy timeout waits for the other.
    /// Nested calls become savepoints inside the outer transaction.
    ///
    /// `durable` commits with `synchronous=FULL`: the WAL is flushed to the disk before this
    /// returns, so what a person was told is queued survives a power cut.
    public func transaction<T>(durable: Bool = false, _ body: () throws -> T) throws -> T {
        let nested = transactionDepth > 0
        if durable && !nested && walEnabled {
            try execute("PRAGMA synchronous=FULL")
        }
        defer { if durable && !nested && walEnabled { try? execute("PRAGMA synchronous=NORMAL") } }
        try execute(nested ? "SAVEPOINT nested" : "BEGIN IMMEDIATE")
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        do {
            let value = try body()
            try execute(nested ? "RELEASE nested" : "COMMIT")
            return value
        } catch {
            try? execute(nested ? "ROLLBACK TO nested; RELEASE nested" : "ROLLBACK")
            throw error
        }
    }

    public var userVersion: Int {
        get throws(DatabaseError) { try query("PRAGMA user_version") { $0.int(0) }.first ?? 0 }
    }
}

/// A value bound to a statement parameter.
public enum SQLValue: Sendable {
    case null, int(Int64), double(Double), text(String), blob([UInt8])

    public static func int(_ v: Int) -> SQLValue { .int(Int64(v)) }
    public static func optionalText(_ v: String?) -> SQLValue { v.map { .text($0) } ?? .null }
    public static func optionalInt(_ v: Int64?) -> SQLValue { v.map { .int($0) } ?? .null }
    public static func optionalBlob(_ v: [UInt8]?) -> SQLValue { v.map { .blob($0) } ?? .null }
}

final class Statement {
    // Unowned: the connection keeps its statements, and closes after finalizing them.
    unowned let db: Database
    let pointer: OpaquePointer
    /// Handed out by `Database.prepared` and not yet finished.
    var inUse = false

    init(_ db: Database, _ sql: String) throws(DatabaseError) {
        self.db = db
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(db.handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw db.error(rc) }
        pointer = stmt
    }

    deinit { sqlite3_finalize(pointer) }

    /// Ready for the next use: reset (which ends its read of the database) and unbound.
    func finish() {
        sqlite3_reset(pointer)
        sqlite3_clear_bindings(pointer)
        inUse = false
    }

    /// Result column names to indexes, read once per statement.
    private(set) lazy var columnIndex: [String: Int32] = {
        var index: [String: Int32] = [:]
        for i in 0..<sqlite3_column_count(pointer) {
            if let name = sqlite3_column_name(pointer, i) { index[String(cString: name)] = i }
        }
        return index
    }()

    func bind(_ values: [SQLValue]) throws(DatabaseError) {
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(pointer, index)
            case .int(let v): rc = sqlite3_bind_int64(pointer, index, v)
            case .double(let v): rc = sqlite3_bind_double(pointer, index, v)
            case .text(let v): rc = sqlite3_bind_text(pointer, index, v, -1, csqlite_transient())
            case .blob(let v):
                rc = v.withUnsafeBytes { sqlite3_bind_blob(pointer, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(v.count), csqlite_transient()) }
            }
            guard rc == SQLITE_OK else { throw db.error(rc) }
        }
    }

    func step() throws(DatabaseError) -> Bool {
        let rc = sqlite3_step(pointer)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw db.error(rc)
    }
}

/// One result row, read by column name (or, for a single value, by index).
public struct Row {
    let statement: Statement

    /// The index of the result column named `name` (its `AS` alias).
    public func column(_ name: String) throws(DatabaseError) -> Int32 {
        guard let index = statement.columnIndex[name] else {
            throw DatabaseError(code: SQLITE_RANGE, message: "the query has no column named \(name)", path: statement.db.path)
        }
        return index
    }

    public func isNull(_ name: String) throws(DatabaseError) -> Bool { isNull(try column(name)) }
    public func int(_ name: String) throws(DatabaseError) -> Int { int(try column(name)) }
    public func int64(_ name: String) throws(DatabaseError) -> Int64 { int64(try column(name)) }
    public func optionalInt64(_ name: String) throws(DatabaseError) -> Int64? { optionalInt64(try column(name)) }
    public func bool(_ name: String) throws(DatabaseError) -> Bool { int(try column(name)) != 0 }
    public func text(_ name: String) throws(DatabaseError) -> String { text(try column(name)) }
    public func optionalText(_ name: String) throws(DatabaseError) -> String? { optionalText(try column(name)) }
    public func blob(_ name: String) throws(DatabaseError) -> [UInt8] { blob(try column(name)) }
    public func optionalBlob(_ name: String) throws(DatabaseError) -> [UInt8]? { optionalBlob(try column(name)) }

    public func isNull(_ i: Int32) -> Bool { sqlite3_column_type(statement.pointer, i) == SQLITE_NULL }
    public func int(_ i: Int32) -> Int { Int(sqlite3_column_int64(statement.pointer, i)) }
    public func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(statement.pointer, i) }
    public func optionalInt64(_ i: Int32) -> Int64? { isNull(i) ? nil : int64(i) }
    public func double(_ i: Int32) -> Double { sqlite3_column_double(statement.pointer, i) }
    public func text(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(statement.pointer, i) else { return "" }
        return String(cString: p)
    }
    public func optionalText(_ i: Int32) -> String? { isNull(i) ? nil : text(i) }
    public func blob(_ i: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement.pointer, i))
        guard count > 0, let p = sqlite3_column_blob(statement.pointer, i) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: count))
    }
    public func optionalBlob(_ i: Int32) -> [UInt8]? { isNull(i) ? nil : blob(i) }
}
