/// Rows leaving the queue for good: each removal is checked against
/// `TransferState.removable`, and the DELETE names the state it expects.
extension QueueStore {
    /// Marks rows for cancellation; the agent stops running ones and removes them. Rows
    /// the table does not let a cancel remove (completed ones) are left as they are.
    public func requestCancel(_ ids: [Int64]) throws {
        let states = TransferState.removable[.cancel, default: []].map { SQLValue.text($0.rawValue) }
        let placeholders = Array(repeating: "?", count: states.count).joined(separator: ", ")
        try database.transaction(durable: true) {
            for id in ids {
                try database.run("UPDATE transfers SET cancel_requested = 1 WHERE id = ? AND state IN (\(placeholders))", [.int(id)] + states)
            }
        }
    }

    /// Uploads still waiting whose file went away (deleted, or replaced by another renamed
    /// over it), those `condition` picks over `transfers`, leave as a cancel would take them:
    /// removed at once when nothing was begun on the server, asked to cancel otherwise (the
    /// agent removes what they began). `alsoSet` is written into those asked. Their ids.
    func withdrawWaitingUploads(where condition: String, _ arguments: [SQLValue], alsoSet: String = "") throws -> [Int64] {
        let states: [TransferState] = [.queued, .retrying, .failed]
        for state in states { try state.removing(by: .cancel) }
        let waiting = "direction = 'upload' AND state IN \(TransferState.sql(.queued, .retrying, .failed)) AND moved_to IS NULL AND cancel_requested = 0 AND \(condition)"
        let ids = try database.query("SELECT id FROM transfers WHERE \(waiting)", arguments) { try $0.int64("id") }
        guard !ids.isEmpty else { return [] }
        try database.run("DELETE FROM transfers WHERE \(waiting) AND upload_url IS NULL AND finishing = 0", arguments)
        try database.run("UPDATE transfers SET cancel_requested = 1\(alsoSet.isEmpty ? "" : ", " + alsoSet) WHERE \(waiting)", arguments)
        return ids
    }

    /// Removes a row for good, if the table lets `removal` take it from its state.
    /// Returns false when it was already gone.
    @discardableResult
    public func remove(_ id: Int64, by removal: TransferState.Removal) throws -> Bool {
        try database.transaction(durable: true) {
            guard let row = try transfer(id: id) else { return false }
            try row.state.removing(by: removal)
            try declineNewVersions("t.id = ?", [.int(id)])
            let removed = try database.run("DELETE FROM transfers WHERE id = ? AND state = ?", [.int(id), .text(row.state.rawValue)]) > 0
            try forgetUntrackedLocalDrive()
            return removed
        }
    }

    public enum ClearScope: String, Sendable { case completed, failed, all }

    /// Clears finished lists. `all` clears completed and failed rows, never active ones.
    @discardableResult
    public func clear(_ scope: ClearScope) throws -> Int {
        let states: [TransferState] = switch scope {
        case .completed: [.completed]
        case .failed: [.failed]
        case .all: [.completed, .failed]
        }
        for state in states { try state.removing(by: .clear) }
        let placeholders = Array(repeating: "?", count: states.count).joined(separator: ", ")
        return try database.transaction(durable: true) {
            try declineNewVersions("t.state IN (\(placeholders))", states.map { .text($0.rawValue) })
            let cleared = try database.run("DELETE FROM transfers WHERE state IN (\(placeholders))", states.map { .text($0.rawValue) })
            // A download cleared from the list takes its file out of Local Drive's round trip.
            try forgetUntrackedLocalDrive()
            return cleared
        }
    }

    /// Removes an account and every transfer queued for it.
    @discardableResult
    public func removeAccount(named name: String) throws -> Bool {
        try database.transaction(durable: true) {
            guard let account = try account(named: name) else { return false }
            let states = try database.query("SELECT DISTINCT state FROM transfers WHERE account_id = ?", [.int(account.id)]) { r in
                TransferState(rawValue: r.text(0))
            }
            for state in states.compactMap({ $0 }) { try state.removing(by: .accountRemoved) }
            try database.run("DELETE FROM transfers WHERE account_id = ?", [.int(account.id)])
            return try database.run("DELETE FROM accounts WHERE id = ?", [.int(account.id)]) > 0
        }
    }
}
