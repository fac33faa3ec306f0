import Platform

/// Brings a database's write-ahead log to the disk after durable commits, one flush for
/// every commit that came before it (group commit).
///
/// A durable commit used to flush the log inside the commit (`synchronous=FULL`), holding
/// this process's turn to write (`WriterTurn`) for as long as the disk took: with three
/// transfers recording files and the scheduler recording their ends, every write of the
/// process waited behind each flush in turn. Now the commit writes the log without
/// flushing it, gives the turn back, and then waits here until a flush that began after
/// it has ended. A sync works on the file, not on one connection's descriptor of it, so one
/// flush covers every connection's commits before it; commits that arrive while a flush
/// runs share the next one.
/// One per database file in a process, kept with its `WriterTurn`.
final class LogFlush: @unchecked Sendable {
    // Sendable by construction: every field is read and written with `condition` held.
    private let condition = Condition()
    /// Durable commits made so far, and how many of them a finished flush covered.
    private var committed: UInt64 = 0
    private var flushed: UInt64 = 0
    private var flushing = false
    /// The error of the last flush, for the commits it was to cover.
    private var failure: (covering: UInt64, errno: Int32)?


    /// Returns once a flush begun after the caller's commit has ended; the errno of a
    /// failed flush otherwise (`EIO`, `ENOSPC`: the commit is in the log, perhaps not on the
    /// disk). `flush` syncs the log through the caller's connection (the log file as that
    /// connection has it open): whichever waiting thread flushes does it with its own.
    func commitMade(flush: () -> Int32?) -> Int32? {
        condition.lock()
        defer { condition.unlock() }
        committed += 1
        let mine = committed
        while flushed < mine {
            if let failure, failure.covering >= mine { return failure.errno }
            if flushing {
                condition.wait()
                continue
            }
            flushing = true
            let covering = committed
            condition.unlock()
            let error = flush()
            condition.lock()
            flushing = false
            if let error { failure = (covering, error) } else { flushed = max(flushed, covering) }
            condition.broadcast()
        }
        return nil
    }
}
