/// Where a transfer is in its life. There is no fifth, silent state: every row that is
/// not moving carries a `Reason` saying why.
public enum TransferState: String, Sendable, CaseIterable, Codable {
    case queued
    case inProgress = "in_progress"
    case retrying
    case completed
    case failed

    /// The transitions the queue allows; everything else is a bug and throws.
    ///
    /// `in_progress -> queued` is a clean stop (network gone, agent stopping): the row
    /// keeps its checkpoint and no attempt is counted. `retrying -> queued` is the same
    /// for a row that was waiting out its backoff.
    public static let allowed: [TransferState: Set<TransferState>] = [
        .queued: [.inProgress],
        .inProgress: [.completed, .retrying, .failed, .queued],
        .retrying: [.inProgress, .queued],
        .failed: [.queued],
        .completed: [],
    ]

    public func canMove(to next: TransferState) -> Bool { Self.allowed[self]?.contains(next) ?? false }

    /// Checks a transition, throwing `IllegalTransition` when the table forbids it.
    public func moving(to next: TransferState) throws(IllegalTransition) -> TransferState {
        guard canMove(to: next) else { throw IllegalTransition(from: self, to: next) }
        return next
    }

    /// Why a row leaves the queue for good.
    public enum Removal: String, Sendable, CaseIterable {
        /// The person cancelled it: anything not yet done (a running one once it has stopped).
        case cancel
        /// `clear`: the finished lists only.
        case clear
        /// Its account was removed: everything queued for that server goes with it.
        case accountRemoved = "account_removed"
    }

    /// The states a row may be removed from, per cause; a completed row is history that
    /// only `clear` (or removing its account) takes away.
    public static let removable: [Removal: Set<TransferState>] = [
        .cancel: [.queued, .inProgress, .retrying, .failed],
        .clear: [.completed, .failed],
        .accountRemoved: Set(allCases),
    ]

    public func canBeRemoved(by removal: Removal) -> Bool { Self.removable[removal]?.contains(self) ?? false }

    /// Checks a removal, throwing `IllegalTransition` when the table forbids it.
    public func removing(by removal: Removal) throws(IllegalTransition) {
        guard canBeRemoved(by: removal) else { throw IllegalTransition(from: self, removedBy: removal) }
    }

    /// Rows that still have work ahead of them.
    public var isActive: Bool { self == .queued || self == .inProgress || self == .retrying }
}

/// The states as SQL literals, for the queries: a state's name is written in one place, here
/// (and in the schema's CHECK, which the migrations keep as they were).
extension TransferState {
    /// `'in_progress'`, ready to stand in a query.
    public var sql: String { "'\(rawValue)'" }

    /// `('queued', 'in_progress', 'retrying')`, for `state IN …`.
    public static func sql(_ states: TransferState...) -> String {
        "(" + states.map(\.sql).joined(separator: ", ") + ")"
    }

    /// Not finished: waiting, moving or waiting to try again.
    public static let unfinished: [TransferState] = [.queued, .inProgress, .retrying]
    public static let unfinishedSQL = "(" + unfinished.map(\.sql).joined(separator: ", ") + ")"
}
