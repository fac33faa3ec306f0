import CSQLite
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
