import Queue

/// What a pass does once its writes are committed, and what it undoes when they are not.
///
/// A pass records outcomes and starts rows in one transaction (one commit per pass rather
/// than one per row). Nothing outside the database may act on a row's new state before that
/// state is committed: a transfer's thread starts, a notice is shown, the log tells it, a
/// watch rule moves an original to the trash only afterwards. When the commit fails, the
/// agent's memory goes back to what the database still says: outcomes wait to be recorded
/// again, rows it meant to start are not running. (Caution the pass took meanwhile stays:
/// a busy server is eased off, a refused password read again.)
struct AfterCommit {
    private var committed: [() -> Void] = []
    private var rolledBack: [() -> Void] = []

    /// Runs `action` once the pass's writes are committed.
    mutating func onCommit(_ action: @escaping () -> Void) { committed.append(action) }

    /// Runs `action` when the pass's writes were rolled back instead.
    mutating func onRollback(_ action: @escaping () -> Void) { rolledBack.append(action) }

    /// Runs what waited for the end of the transaction, in the order it was asked.
    func finish(committed wasCommitted: Bool) {
        for action in wasCommitted ? committed : rolledBack { action() }
    }
}

extension AfterCommit {
    /// Runs `body` in one write transaction on `database`, then what it asked to run after
    /// the commit, or, when the transaction failed, what it asked to undo (and rethrows).
    ///
    /// A commit that a durable write inside asked to flush (a completion whose original a
    /// watch rule may move to the trash) is flushed before anything runs. When that flush
    /// fails, the change is committed all the same: what waited runs (a started transfer
    /// must run, the rows say it does), and the flush's error is thrown after it. An
    /// original moved meanwhile is in the trash, not gone, should the change not survive.
    static func transaction(on database: Database, _ body: (inout AfterCommit) throws -> Void) throws {
        var after = AfterCommit()
        let flushOwed: Bool
        do {
            flushOwed = try database.transactionOwingFlush { try body(&after) }
        } catch {
            after.finish(committed: false)
            throw error
        }
        var flushFailed: Error?
        if flushOwed {
            do { try database.flushLog() } catch { flushFailed = error }
        }
        after.finish(committed: true)
        if let flushFailed { throw flushFailed }
    }
}
