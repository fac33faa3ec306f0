/// Everything the status icon shows at one moment: built from the queue by the caller, shown
/// by `StatusNotifierItem`. Plain values, compared to decide which change signals to send.
public struct TrayPicture: Sendable, Equatable {
    /// The four faces of the icon, each with the item `Status` the protocol wants for it.
    public enum Mood: String, Sendable, CaseIterable {
        /// Everything uploaded; nothing waits.
        case done
        /// Something is moving.
        case uploading
        /// Work waits: offline, Wi-Fi only, paused, battery, no agent.
        case waiting
        /// Something failed, or a watch rule is in trouble.
        case attention

        /// The SNI `Status`: `Passive` lets a panel hide an item with nothing to say.
        public var itemStatus: String {
            switch self {
            case .done: "Passive"
            case .uploading, .waiting: "Active"
            case .attention: "NeedsAttention"
            }
        }

        /// The icon installed under hicolor by `make install` and the package.
        public var iconName: String { "instant-upload-\(rawValue)" }

        /// A freedesktop icon-naming-spec name every theme has, for when ours are not installed.
        public var fallbackIconName: String {
            switch self {
            case .done: "emblem-default"
            case .uploading: "network-transmit"
            case .waiting: "media-playback-pause"
            case .attention: "dialog-warning"
            }
        }
    }

    public var mood: Mood
    /// The tooltip's first line and the item's title.
    public var title: String
    /// The tooltip's text: the status line, in the words `status` uses.
    public var body: String
    public var menu: [TrayMenuItem]

    public init(mood: Mood, title: String, body: String, menu: [TrayMenuItem]) {
        self.mood = mood
        self.title = title
        self.body = body
        self.menu = menu
    }
}

/// What a menu entry does when the person activates it.
public enum TrayAction: Sendable, Hashable {
    case pauseAll
    case resumeAll
    case retryFailed
    case sendFiles
    case showQueue
    case quit
    /// A file uploaded lately: its remote path on `account`.
    case openUploaded(account: String, remotePath: String)
    case pauseRule(String)
    case resumeRule(String)
}

/// One entry of the menu: a command, a line of text, a separator or a submenu.
public struct TrayMenuItem: Sendable, Equatable {
    public var label: String
    public var action: TrayAction?
    public var enabled: Bool
    public var isSeparator: Bool
    public var children: [TrayMenuItem]

    public init(_ label: String, action: TrayAction? = nil, enabled: Bool = true, children: [TrayMenuItem] = []) {
        self.label = label
        self.action = action
        self.enabled = enabled
        isSeparator = false
        self.children = children
    }

    /// Text that does nothing when clicked (the status line, a failure's reason).
    public static func text(_ label: String) -> TrayMenuItem { TrayMenuItem(label, enabled: false) }

    public static let separator: TrayMenuItem = {
        var item = TrayMenuItem("")
        item.isSeparator = true
        return item
    }()
}
