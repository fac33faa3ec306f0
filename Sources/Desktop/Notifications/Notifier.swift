import Platform

/// Desktop notifications through `org.freedesktop.Notifications` on the session bus, and
/// the person's answers to them (a clicked "Retry", a dismissed bubble).
///
/// Safe to share between threads: calls are serialised on one bus connection. Callbacks run
/// on the notifier's own thread; they may call `notify` and `close` again. Capture the
/// notifier weakly in them, or it stays alive for as long as the callback is set.
///
/// ```swift
/// let notifier = Notifier(environment: paths.environment)   // nil: no desktop to talk to
/// notifier?.onAction = { id, key in if key == "retry" { ... } }
/// let id = notifier?.notify(AttentionBatch(items)!.notification)
/// ```
public final class Notifier: Sendable {
    public static let appName = "instant-upload"
    static let service = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"

    /// Why a notification went away, as the server reports it.
    public enum CloseReason: Sendable, Equatable {
        case expired, dismissed, closedByCall, undefined
        case other(UInt32)

        init(_ code: UInt32) {
            switch code {
            case 1: self = .expired
            case 2: self = .dismissed
            case 3: self = .closedByCall
            case 4: self = .undefined
            default: self = .other(code)
            }
        }
    }

    /// The server's name and version, e.g. "gnome-shell 44.9", for logs.
    public let serverName: String
    /// What the server says it can do: "actions", "body", "body-markup", "persistence"...
    public let capabilities: Set<String>
    /// False when the server shows no buttons (then `hintWithoutActions` goes into the body).
    public var canShowActions: Bool { capabilities.contains("actions") }

    private let bus: SessionBus
    private let callTimeout: Int32
    private let handlers = Locked<Handlers>(Handlers())
    /// Notifications this process showed and that are still open, with the unique bus name of
    /// the server that showed them: signals about anything else are not ours.
    private let open = Locked<[UInt32: String]>([:])

    private struct Handlers {
        var action: (@Sendable (UInt32, String) -> Void)?
        var closed: (@Sendable (UInt32, CloseReason) -> Void)?
    }

    /// Connects to the session bus in `environment` and checks that a notification server
    /// answers. Nil when there is none (no session bus, no server): one log line says why,
    /// and the caller carries on without notifications.
    public init?(environment: [String: String] = ProcessEnvironment.current, callTimeoutMilliseconds: Int32 = 5000) {
        guard let address = SessionBus.address(in: environment) else {
            // A terminal without a desktop session: normal, not worth a line on every command.
            Log.debug("no notification service: no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
            return nil
        }
        let serverName: String, capabilities: Set<String>
        let connection: BusConnection
        do {
            connection = try BusConnection(address: address)
            // Asking for the server's identity starts it if it is D-Bus activatable.
            let info = try connection.call(destination: Self.service, path: Self.path, interface: Self.service,
                                           member: "GetServerInformation", timeoutMilliseconds: callTimeoutMilliseconds)
            let fields = info.arguments.compactMap(\.stringValue)
            serverName = fields.count >= 3 ? "\(fields[0]) \(fields[2])" : fields.first ?? "unknown"
            let reply = try connection.call(destination: Self.service, path: Self.path, interface: Self.service,
                                            member: "GetCapabilities", timeoutMilliseconds: callTimeoutMilliseconds)
            capabilities = Set(reply.arguments.first?.stringsValue ?? [])
            for member in ["ActionInvoked", "NotificationClosed"] {
                try connection.addMatch("type='signal',interface='\(Self.service)',member='\(member)',path='\(Self.path)'")
            }
            bus = try SessionBus(connection)
        } catch {
            Log.info("no notification service: \(error.isServiceUnknown ? "nothing provides \(Self.service) on the session bus" : error.description)")
            return nil
        }
        self.serverName = serverName
        self.capabilities = capabilities
        self.callTimeout = callTimeoutMilliseconds
        bus.start(name: "notifications") { [weak self] signals in self?.handle(signals) }
        Log.debug("notifications through \(serverName) (\(capabilities.sorted().joined(separator: ", ")))")
    }

    deinit { bus.stop() }

    /// Called with the notification's id and the action's key when the person clicks a
    /// button ("retry") or the notification itself ("default"), on the notifier's thread.
    public var onAction: (@Sendable (UInt32, String) -> Void)? {
        get { handlers.withLock { $0.action } }
        set { handlers.withLock { $0.action = newValue } }
    }

    /// Called when one of this process's notifications goes away, on the notifier's thread.
    public var onClosed: (@Sendable (UInt32, CloseReason) -> Void)? {
        get { handlers.withLock { $0.closed } }
        set { handlers.withLock { $0.closed = newValue } }
    }

    /// False once the session bus has gone away; `notify` then returns nil.
    public var isConnected: Bool { bus.isConnected }

    /// Shows `notification`; returns its id (for `close`, `replacesID` and the callbacks),
    /// or nil when it could not be shown (logged).
    @discardableResult
    public func notify(_ notification: DesktopNotification) -> UInt32? {
        var hints: [(String, BusValue)] = [("urgency", .byte(notification.urgency.rawValue))]
        if let category = notification.category { hints.append(("category", .string(category))) }
        let arguments: [BusValue] = [
            .string(Self.appName), .uint32(notification.replacesID), .string(notification.icon),
            .string(notification.summary), .string(notification.body(forCapabilities: capabilities)),
            .strings(notification.actions.flatMap { [$0.key, $0.label] }),
            .variantDictionary(hints), .int32(notification.expireTimeout),
        ]
        do {
            let reply = try bus.call(destination: Self.service, path: Self.path, interface: Self.service, member: "Notify",
                                     arguments: arguments, timeoutMilliseconds: callTimeout)
            guard let id = reply.arguments.first?.uint32Value else {
                Log.warning("notification not shown: the notification server answered Notify without an id")
                return nil
            }
            open.withLock { $0[id] = reply.sender ?? "" }
            return id
        } catch {
            Log.warning("notification not shown: \(error)")
            return nil
        }
    }

    /// Shows a notification with these words and buttons (`[(key: "retry", label: "Retry")]`).
    @discardableResult
    public func notify(summary: String, body: String, actions: [(key: String, label: String)] = [],
                       urgency: DesktopNotification.Urgency = .normal) -> UInt32? {
        notify(DesktopNotification(summary: summary, body: body, actions: actions.map { .init(key: $0.key, label: $0.label) },
                                   urgency: urgency))
    }

    /// Takes a notification off the screen (nothing happens if it is already gone).
    public func close(id: UInt32) {
        do {
            _ = try bus.call(destination: Self.service, path: Self.path, interface: Self.service, member: "CloseNotification",
                             arguments: [.uint32(id)], timeoutMilliseconds: callTimeout)
        } catch {
            Log.debug("notification \(id) not closed: \(error)")
        }
    }

    /// Runs on the bus thread with no lock held.
    private func handle(_ signals: [BusSignal]) {
        for signal in signals where signal.interface == Self.service {
            guard let id = signal.arguments.first?.uint32Value, signal.arguments.count >= 2 else { continue }
            // Servers broadcast these signals to every client; only the server that showed
            // our notification speaks for it.
            let ours = open.withLock { open -> Bool in
                guard let server = open[id], server.isEmpty || server == signal.sender else { return false }
                if signal.member == "NotificationClosed" { open[id] = nil }
                return true
            }
            guard ours else { continue }
            switch signal.member {
            case "ActionInvoked":
                if let key = signal.arguments[1].stringValue, let action = handlers.withLock({ $0.action }) { action(id, key) }
            case "NotificationClosed":
                if let code = signal.arguments[1].uint32Value, let closed = handlers.withLock({ $0.closed }) { closed(id, CloseReason(code)) }
            default:
                break
            }
        }
    }
}
