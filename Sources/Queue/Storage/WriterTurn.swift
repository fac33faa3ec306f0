import Platform

/// The turn to write to one database file, taken by the threads of this process in order.
///
/// SQLite lets one connection write at a time and makes the others wait in its busy
/// handler, which sleeps 1, 2, 5, 10 ms and more before it looks again. The agent's
/// transfers each had a connection and wrote at every step of every file, so with small
/// files they spent most of their time asleep there while the lock was long free (three
/// transfers of 30 kB photos: a few hundred files/s instead of thousands). Within a
/// process a mutex hands the turn over at once; another process still meets SQLite's lock
/// and its busy timeout. (The transfers now share the scheduler's connection, whose own
/// turn orders them; the folder watchers and cancellations still write on their own.)
///
/// A write never waits longer than the busy timeout in all: the turn is waited for at most
/// that long, and SQLite then gets only what is left of it. A thread that holds the turn
/// while another program holds the database must not make the threads behind it wait for
/// its whole timeout and then their own.
///
/// Recursive: a thread that writes on a second connection while its first holds the turn
/// gets SQLite's own answer (busy), as it would without this, rather than waiting on itself.
final class WriterTurn: Sendable {
    private let turn = TimedTurn()
    /// The flushes of the same file's log after durable commits, taken out of the turn.
    let logFlush = LogFlush()

    private init() {}

    /// Runs `body` while no other thread of this process writes to the file, waiting at most
    /// `seconds` for the turn; `body` is told how many of them are left. Nil (and `body`
    /// not run) when the turn did not come in time.
    func run<Result>(waitingAtMost seconds: Double, _ body: (_ secondsLeft: Double) throws -> Result) throws -> Result? {
        try turn.run(waitingAtMost: seconds, body)
    }

    /// The turn for the file at `path`; kept for the life of the process (a process opens a
    /// handful of databases).
    static func forFile(_ path: String) -> WriterTurn {
        turns.withLock { turns in
            if let turn = turns[path] { return turn }
            let turn = WriterTurn()
            turns[path] = turn
            return turn
        }
    }

    private static let turns = Locked<[String: WriterTurn]>([:])
}
