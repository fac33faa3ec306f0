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

    /// Rows that still have work ahead of them.
    public var isActive: Bool { self == .queued || self == .inProgress || self == .retrying }
}

public struct IllegalTransition: Error, Equatable, CustomStringConvertible, Sendable {
    public var from: TransferState
    public var to: TransferState
    public init(from: TransferState, to: TransferState) {
        self.from = from
        self.to = to
    }
    public var description: String { "a transfer cannot go from \(from.rawValue) to \(to.rawValue)" }
}

/// Which way the bytes go.
public enum Direction: String, Sendable, Codable, CaseIterable {
    case upload, download
}

/// Who asked for a transfer. Work a person asked for by hand goes ahead of auto-uploads.
public enum Origin: String, Sendable, Codable {
    case manual, share, auto

    /// Lower runs first.
    public var lane: Int { self == .auto ? 1 : 0 }
}
