import CSQLite
import Glibc

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

    /// Something worked out once per statement from its columns (where each column a decoder
    /// reads is), made by `make` at the first row and kept with the statement for the rest.
    public func layout<Layout>(_ make: (Row) throws(DatabaseError) -> Layout) throws(DatabaseError) -> Layout {
        if let kept = statement.layout as? Layout { return kept }
        let made = try make(self)
        statement.layout = made
        return made
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
