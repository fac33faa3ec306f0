/// What one desktop notification says and offers, as the freedesktop notification
/// specification describes it. A plain value: build it, then hand it to `Notifier.notify`.
public struct DesktopNotification: Sendable, Equatable {
    /// How insistent the desktop should be. Critical notifications usually stay on screen
    /// until the person dismisses them.
    public enum Urgency: UInt8, Sendable {
        case low = 0, normal = 1, critical = 2
    }

    /// A button: `key` comes back in `Notifier.onAction`, `label` is what the person reads.
    public struct Action: Sendable, Equatable {
        public var key: String
        public var label: String
        public init(key: String, label: String) {
            self.key = key
            self.label = label
        }

        /// "Retry": the failed items of the notification go back in the queue.
        public static let retry = Action(key: "retry", label: "Retry")
    }

    /// One line, shown bold; never markup.
    public var summary: String
    /// The detail, plain text (the notifier escapes it for servers that read markup).
    public var body: String
    public var actions: [Action]
    public var urgency: Urgency
    /// An icon name from the freedesktop icon naming specification.
    public var icon: String
    /// A standard category such as `transfer.error` or `transfer.complete`.
    public var category: String?
    /// The id of an earlier notification this one replaces in place, or 0 for a new one.
    public var replacesID: UInt32
    /// Milliseconds on screen: -1 lets the server decide, 0 keeps it until dismissed.
    public var expireTimeout: Int32
    /// Appended to the body when the server cannot show buttons, so the person still
    /// learns how to act (e.g. "Retry with `instant-upload retry --all-failed`.").
    public var hintWithoutActions: String?

    public init(summary: String, body: String = "", actions: [Action] = [], urgency: Urgency = .normal,
                icon: String = "document-send", category: String? = nil, replacesID: UInt32 = 0,
                expireTimeout: Int32 = -1, hintWithoutActions: String? = nil) {
        self.summary = summary
        self.body = body
        self.actions = actions
        self.urgency = urgency
        self.icon = icon
        self.category = category
        self.replacesID = replacesID
        self.expireTimeout = expireTimeout
        self.hintWithoutActions = hintWithoutActions
    }

    /// The body as a server with these capabilities should receive it.
    func body(forCapabilities capabilities: Set<String>) -> String {
        var text = body
        if !capabilities.contains("actions"), !actions.isEmpty, let hint = hintWithoutActions {
            text += text.isEmpty ? hint : "\n" + hint
        }
        return capabilities.contains("body-markup") ? Markup.escape(text) : text
    }
}
