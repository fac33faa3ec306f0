import CSQLite
import Platform

/// How a fingerprint is kept in a table: four columns, `fp_device, fp_inode, fp_size,
/// fp_mtime_ns`, in every table that keeps one (transfers, watch_taken, local_drive). Written
/// and read only through here.
extension FileFingerprint {
    /// `fp_device = ?, fp_inode = ?, fp_size = ?, fp_mtime_ns = ?`, for an UPDATE.
    static let assignments = "fp_device = ?, fp_inode = ?, fp_size = ?, fp_mtime_ns = ?"

    /// `fp_device = ? AND fp_inode = ? AND fp_size = ? AND fp_mtime_ns = ?`, for a WHERE that
    /// asks for this fingerprint (with `columnValues`), of the table `alias` names if given.
    static func matching(_ alias: String = "") -> String {
        let prefix = alias.isEmpty ? "" : alias + "."
        return ["fp_device", "fp_inode", "fp_size", "fp_mtime_ns"].map { "\(prefix)\($0) = ?" }.joined(separator: " AND ")
    }

    /// The same for a row of transfers, whose file's change time when it was queued
    /// (`queued_ctime_ns`, see `QueueStore.queuedChangeTime`) says nothing of another version.
    static let transferAssignments = assignments + ", queued_ctime_ns = NULL"

    /// The values for those four columns, in that order (device and inode keep their bits).
    var columnValues: [SQLValue] {
        [.int(Int64(bitPattern: device)), .int(Int64(bitPattern: inode)), .int(size), .int(mtimeNanoseconds)]
    }

    /// The four values of an optional fingerprint: NULLs when there is none.
    static func columnValues(_ fingerprint: FileFingerprint?) -> [SQLValue] {
        fingerprint?.columnValues ?? [.null, .null, .null, .null]
    }
}

extension Row {
    /// The fingerprint in this row's four `fp_` columns; nil when they are NULL.
    func fingerprint() throws(DatabaseError) -> FileFingerprint? {
        if try isNull("fp_device") { return nil }
        return try FileFingerprint(device: UInt64(bitPattern: int64("fp_device")), inode: UInt64(bitPattern: int64("fp_inode")),
                                   size: int64("fp_size"), mtimeNanoseconds: int64("fp_mtime_ns"))
    }

    /// The fingerprint of a table that always keeps one (watch_taken, local_drive).
    func requiredFingerprint() throws(DatabaseError) -> FileFingerprint {
        guard let fingerprint = try fingerprint() else {
            throw DatabaseError(code: SQLITE_MISMATCH, message: "a row without its file's fingerprint", path: statement.db.path)
        }
        return fingerprint
    }
}
