public struct IllegalTransition: Error, Equatable, CustomStringConvertible, Sendable {
    public var from: TransferState
    /// The state it was to move to; nil when it was to be removed.
    public var to: TransferState?
    public var removal: TransferState.Removal?

    public init(from: TransferState, to: TransferState) {
        self.from = from
        self.to = to
    }

    public init(from: TransferState, removedBy removal: TransferState.Removal) {
        self.from = from
        self.removal = removal
    }

    public var description: String {
        if let removal {
            let verb = switch removal { case .cancel: "cancelled"; case .clear: "cleared"; case .accountRemoved: "removed with its account" }
            return "a \(from.rawValue.replacing("_", with: " ")) transfer cannot be \(verb)"
        }
        return "a transfer cannot go from \(from.rawValue) to \(to?.rawValue ?? "nowhere")"
    }
}
