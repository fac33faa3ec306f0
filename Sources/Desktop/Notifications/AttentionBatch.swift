import Platform

/// The words for transfers that stopped and need the person: one notification for the
/// whole batch, naming the first item and its reason.
///
/// "2 uploads need attention" / "IMG_0042.jpg - no quota left on server" / "and 1 more".
public struct AttentionBatch: Sendable, Equatable {
    public struct Item: Sendable, Equatable {
        public enum Direction: Sendable { case upload, download }

        /// The file's name as it is on disk or on the server (control characters are escaped here).
        public var fileName: String
        /// The failure's message, as the queue stores it: "no quota left on server".
        public var reason: String
        public var direction: Direction
        /// Whether retrying can help (quota freed, new login); "Retry" is offered when any item can.
        public var canRetry: Bool

        public init(fileName: String, reason: String, direction: Direction = .upload, canRetry: Bool = true) {
            self.fileName = fileName
            self.reason = reason
            self.direction = direction
            self.canRetry = canRetry
        }
    }

    public let items: [Item]

    /// Nil for an empty batch: nothing needs saying.
    public init?(_ items: [Item]) {
        guard !items.isEmpty else { return nil }
        self.items = items
    }

    /// "1 upload needs attention", "3 downloads need attention", "2 transfers need attention".
    public var summary: String {
        let noun: String
        switch Set(items.map(\.direction)) {
        case [.upload]: noun = "upload"
        case [.download]: noun = "download"
        default: noun = "transfer"
        }
        return items.count == 1 ? "1 \(noun) needs attention" : "\(DisplayText.grouped(items.count)) \(noun)s need attention"
    }

    /// "IMG_0042.jpg - no quota left on server", then "and N more" on a line of its own.
    public var body: String {
        let more = items.count - 1
        return firstItem + (more > 0 ? "\nand \(DisplayText.grouped(more)) more" : "")
    }

    /// Everything on one line, for a log or a terminal:
    /// "2 uploads need attention: IMG_0042.jpg - no quota left on server".
    public var line: String { summary + ": " + firstItem }

    /// Offered when at least one item may succeed on a second try.
    public var offersRetry: Bool { items.contains(where: \.canRetry) }

    /// The notification: critical (it stays until seen), a warning icon, and "Retry" when it can help.
    public var notification: DesktopNotification {
        DesktopNotification(summary: summary, body: body, actions: offersRetry ? [.retry] : [], urgency: .critical,
                            icon: "dialog-warning", category: "transfer.error",
                            hintWithoutActions: "Retry with `instant-upload retry --all-failed`.")
    }

    private var firstItem: String {
        DisplayText.escape(items[0].fileName) + " - " + items[0].reason
    }
}
