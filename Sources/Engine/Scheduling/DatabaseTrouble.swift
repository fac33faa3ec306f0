import Glibc
import Platform
import Queue

/// What the agent does when the queue database refuses it: a locked, busy or failing
/// database is waited out (the pass is tried again, a little later each time), a full disk
/// pauses the queue until there is room again, and only a damaged file stops the agent,
/// because then a person has to act. It is said once when it starts and once when it ends.
struct DatabaseTrouble {
    /// The folder the database lives in, whose free space says when a full disk has room again.
    let folder: String
    private(set) var failures = 0
    private(set) var diskFull = false
    private var lastSaid: String?

    /// Free space below which a disk that was full is not yet worth another write.
    static let roomNeeded: UInt64 = 1 << 20

    init(folder: String) { self.folder = folder }

    /// Takes note of a failed pass. Throws when the agent has to stop.
    mutating func record(_ error: Error) throws {
        let database = (error as? DatabaseError) ?? (error as? QueueError)?.underlying
        if let database, database.isCorrupt { throw QueueError.damaged(path: database.path, underlying: database) }
        failures += 1
        if database?.isDiskFull == true { diskFull = true }
        let said = if diskFull { "the disk holding the queue is full (\(folder)); the queue is paused until there is room again" }
                   else if database != nil { "the queue database did not answer (\(error)); trying again" }
                   else { "the scheduler could not finish a pass (\(error)); trying again" }
        if said != lastSaid {
            Log.warning(said)
            lastSaid = said
        }
    }

    /// A pass went through: whatever was wrong is over.
    mutating func cleared() {
        guard failures > 0 else { return }
        Log.info(diskFull ? "there is room on the disk again: the queue continues" : "the queue database answers again")
        failures = 0
        diskFull = false
        lastSaid = nil
    }

    /// How long to wait before the next pass: a little longer after each failure in a row,
    /// never more than half a minute (a full disk is looked at every few seconds).
    var delay: Double? {
        guard failures > 0 else { return nil }
        let ceiling = diskFull ? 5.0 : 30.0
        return min(ceiling, 0.5 * Double(1 << min(failures - 1, 10)))
    }

    /// False while the disk is still too full for a write to have a chance: no pass is tried.
    var worthTrying: Bool {
        guard diskFull else { return true }
        var st = statvfs()
        guard statvfs(folder, &st) == 0 else { return true }
        return UInt64(st.f_bavail) * UInt64(st.f_frsize) >= Self.roomNeeded
    }
}
