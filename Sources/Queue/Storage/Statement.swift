import CSQLite
import Glibc

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

    /// What the decoder worked out from this statement's columns (where each of its columns
    /// is); see `Row.layout`.
    var layout: Any?

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
