import Platform

/// Gates that hold part of the queue: a watch rule (its Wi-Fi, power or pause setting, its
/// folder not there), an account's Wi-Fi flag, an account whose password cannot be read or
/// whose server is in maintenance.
///
/// The scheduler finds a gate shut when it meets one of its rows, and then marks every queued
/// row of it (`held_by`) with the gate's reason, once. Marked rows leave the index of rows
/// ready to start, so however many wait behind a gate, the scheduler's query never reads
/// past them: 50,000 photos waiting for Wi-Fi cost nothing per file that goes meanwhile.
/// Each pass asks the gates that hold rows (a few probes of the index on `held_by`, see
/// `heldScopes`) and lifts those that opened (`release`). The marks are the queue's, not the
/// agent's memory, so they outlive a restart and a rolled-back pass alike; a row coming back
/// to `queued` by any other way (retry, `--now`, the person's pause) is marked by nothing.
extension QueueStore {
    /// Which rows a hold applies to, and the mark it leaves on them.
    public enum HoldScope: Sendable, Hashable {
        /// Every row of one account (its password cannot be read, its server is in maintenance).
        case account(Int64)
        /// The rows of one account that its Wi-Fi flag holds while there is no unmetered
        /// Wi-Fi: its auto-uploads of no watch rule (a watch rule's rows follow the rule,
        /// whose default is that flag).
        case wifiFlag(account: Int64)
        /// The rows of one watch rule to one account (held by its Wi-Fi, power or pause
        /// setting, or while its folder is not there).
        case rule(String, account: Int64)

        /// The mark in `held_by`.
        public var key: String {
            switch self {
            case .account(let id): "account:\(id)"
            case .wifiFlag(let id): "wifi:\(id)"
            case .rule(let rule, let id): "rule:\(id):\(rule)"
            }
        }

        /// The scope a mark names; nil for one this version does not know.
        public init?(key: String) {
            let parts = key.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, let id = Int64(parts[1]) else { return nil }
            switch (parts[0], parts.count) {
            case ("account", 2): self = .account(id)
            case ("wifi", 2): self = .wifiFlag(account: id)
            case ("rule", 3): self = .rule(String(parts[2]), account: id)
            default: return nil
            }
        }

        public var accountID: Int64 {
            switch self {
            case .account(let id), .wifiFlag(let id), .rule(_, let id): id
            }
        }

        var condition: (String, [SQLValue]) {
            switch self {
            case .account(let id): ("account_id = ?", [.int(id)])
            case .wifiFlag(let id): ("origin = 'auto' AND ignore_rules = 0 AND watch_rule IS NULL AND account_id = ?", [.int(id)])
            case .rule(let rule, let id): ("origin = 'auto' AND ignore_rules = 0 AND watch_rule = ? AND account_id = ?", [.text(rule), .int(id)])
            }
        }
    }

    /// What a hold does to the retrying rows of its scope whose time has come.
    public enum DueRetrying: Sendable, Equatable {
        /// They are held like the queued ones: their backoff means nothing while the gate is shut.
        case held
        /// They stay retrying, with their own reason, and try again at `until` (a server that
        /// cannot be reached: they are the ones that try it again).
        case postponed(until: Int64)
    }

    /// A gate is shut: its queued rows that no gate holds yet say why and are marked, and
    /// retrying ones whose time has come are held or postponed (`dueRetrying`). Read through
    /// the index of ready rows, so rows marked before are not read again.
    public func hold(_ scope: HoldScope, reason: Reason, dueRetrying: DueRetrying = .held, now: Int64 = nowMilliseconds()) throws {
        let (condition, args) = scope.condition
        let cols = Self.reasonColumns(reason) + [("held_by", SQLValue.text(scope.key))]
        try database.transaction {
            let due = "\(condition) AND next_attempt_at <= ? AND cancel_requested = 0"
            switch dueRetrying {
            case .held:
                try moveAll(from: [.retrying], to: .queued, set: cols + [("next_attempt_at", .null)], where: due, args + [.int(now)])
            case .postponed(let until):
                try database.run("UPDATE transfers SET next_attempt_at = ? WHERE state = \(TransferState.retrying.sql) AND \(due)",
                                 [.int(until)] + args + [.int(now)])
            }
            try database.run("""
                UPDATE transfers INDEXED BY transfers_ready SET \(cols.map { "\($0.0) = ?" }.joined(separator: ", "))
                WHERE state = \(TransferState.queued.sql) AND paused = 0 AND cancel_requested = 0 AND held_by IS NULL AND \(condition)
                """, cols.map(\.1) + args)
        }
    }

    /// The gates that hold rows now, read as a skip through the index on `held_by`: one
    /// probe per gate, however many rows each holds. Marks this version does not know are
    /// lifted here.
    public func heldScopes() throws -> [HoldScope] {
        let keys = try database.query("""
            WITH RECURSIVE mark(key) AS (
                SELECT (SELECT min(held_by) FROM transfers WHERE held_by IS NOT NULL)
                UNION ALL
                SELECT (SELECT min(held_by) FROM transfers WHERE held_by > mark.key) FROM mark WHERE mark.key IS NOT NULL)
            SELECT key FROM mark WHERE key IS NOT NULL
            """) { $0.text(0) }
        var scopes: [HoldScope] = []
        for key in keys {
            if let scope = HoldScope(key: key) {
                scopes.append(scope)
            } else {
                try database.run("UPDATE transfers SET held_by = NULL WHERE held_by = ?", [.text(key)])
            }
        }
        return scopes
    }

    /// A gate opened: its rows are ready again (and say what they said until they start).
    public func release(_ scope: HoldScope) throws {
        try database.run("UPDATE transfers SET held_by = NULL WHERE held_by = ?", [.text(scope.key)])
    }

    /// One row of a shut gate is ready again, to try what holds the rest (the oldest of
    /// those that say the same).
    public func releaseOne(_ scope: HoldScope) throws {
        try database.run("UPDATE transfers SET held_by = NULL WHERE id = (SELECT id FROM transfers WHERE held_by = ? LIMIT 1)",
                         [.text(scope.key)])
    }

    /// A shut gate's rows say `reason` again where something else was written over it (a
    /// gate of the whole queue came and went, the gate's own reason changed). Asked with
    /// three probes of the index on (`held_by`, `reason_code`); the rows are written only
    /// when one of them says otherwise.
    public func restate(_ scope: HoldScope, reason: Reason) throws {
        let saysOtherwise = try database.query("""
            SELECT EXISTS (SELECT 1 FROM transfers WHERE held_by = ?1 AND reason_code IS NULL)
                OR EXISTS (SELECT 1 FROM transfers WHERE held_by = ?1 AND reason_code < ?2)
                OR EXISTS (SELECT 1 FROM transfers WHERE held_by = ?1 AND reason_code > ?2)
            """, [.text(scope.key), .text(reason.code.rawValue)]) { $0.int(0) }.first == 1
        guard saysOtherwise else { return }
        let cols = Self.reasonColumns(reason)
        try database.run("UPDATE transfers SET \(cols.map { "\($0.0) = ?" }.joined(separator: ", ")) WHERE held_by = ? AND reason_code IS NOT ?",
                         cols.map(\.1) + [.text(scope.key), .text(reason.code.rawValue)])
    }
}
