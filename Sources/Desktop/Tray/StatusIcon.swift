import Glibc
import Platform

/// The status icon's life on the session bus: owns a name, serves the item, registers it
/// with the panel's `org.kde.StatusNotifierWatcher` (again whenever a panel starts), and
/// redraws it when told something changed, at most once per `interval`.
///
/// One thread does it all, asleep in `poll` between events: the bus, the change descriptor
/// and the stop descriptor. Nothing wakes it while nothing changes.
public struct StatusIcon {
    public static let watcherName = "org.kde.StatusNotifierWatcher"
    static let watcherPath = "/StatusNotifierWatcher"

    /// How the icon ends.
    public enum Ending: Equatable, Sendable {
        /// The person chose "Quit tray", or the stop descriptor became readable.
        case stopped
        /// The session bus went away: the desktop session ended.
        case busGone
        /// Another process shows the icon on this bus already.
        case alreadyShown
    }

    /// Owned by the one process showing the icon on a session bus.
    public static let instanceName = "org.instantupload.Tray"

    /// The session bus the icon goes on (see `SessionBus.address`), or nil when there is none.
    public static func busAddress(in environment: [String: String]) -> String? { SessionBus.address(in: environment) }

    public var address: String
    /// Readable when something may have changed (an inotify descriptor); `drain` reads it
    /// and says whether anything the icon shows may have changed.
    public var changes: Int32
    public var drain: () -> Bool
    /// Readable when the process is asked to end (a signal pipe).
    public var stop: Int32
    public var interval: Double
    /// Icon names for each mood (ours when installed, else freedesktop fallbacks).
    public var iconName: (TrayPicture.Mood) -> String
    /// A folder panels search for the icon names first (the item's `IconThemePath`), or "".
    public var iconThemePath: String

    public init(address: String, changes: Int32, drain: @escaping () -> Bool, stop: Int32, interval: Double = 1,
                iconName: @escaping (TrayPicture.Mood) -> String = { $0.iconName }, iconThemePath: String = "") {
        self.address = address
        self.changes = changes
        self.drain = drain
        self.stop = stop
        self.interval = interval
        self.iconName = iconName
        self.iconThemePath = iconThemePath
    }

    /// Shows the icon until it is stopped or the bus goes. `picture` reads the queue;
    /// `perform` carries out what the person chose and returns false for "quit".
    public func run(picture: () -> TrayPicture, perform: (TrayAction) -> Bool) throws(BusError) -> Ending {
        let bus = try BusConnection(address: address)
        guard try bus.requestName(Self.instanceName) else { return .alreadyShown }
        // The name the protocol suggests: unique per process and per item.
        let name = "org.kde.StatusNotifierItem-\(getpid())-1"
        guard try bus.requestName(name) else { throw BusError("request the name \(name)", message: "another process owns it") }
        let item = StatusNotifierItem(picture(), iconName: iconName, iconThemePath: iconThemePath)
        bus.serve { item.answer($0) }
        try bus.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.watcherName)'")
        bus.collectSignals()

        var registered = register(name, on: bus, saidWaiting: false)
        var saidWaiting = !registered
        var dirty = false
        var lastDrawn = MonotonicClock.seconds()
        guard let socket = bus.fileDescriptor else { throw BusError("session bus", message: "the connection has no socket to wait on") }
        var fds = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: changes, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: stop, events: Int16(POLLIN), revents: 0)]
        while true {
            guard bus.pump() else {
                Log.info("status icon: the session bus went away (the desktop session ended); the status icon ends")
                return .busGone
            }
            for signal in bus.takeSignals() where signal.member == "NameOwnerChanged" {
                // (name, old owner, new owner): a new owner is a panel that (re)started.
                guard signal.arguments.count == 3, signal.arguments[0].stringValue == Self.watcherName else { continue }
                if signal.arguments[2].stringValue?.isEmpty == false {
                    registered = register(name, on: bus, saidWaiting: saidWaiting)
                    saidWaiting = !registered
                } else if registered {
                    registered = false
                    saidWaiting = true
                    Log.info("status icon: the panel's StatusNotifierWatcher went away; waiting for it to come back")
                }
            }
            var acted = false
            for action in item.takeRequests() {
                guard perform(action) else {
                    Log.info("status icon: quit from its menu")
                    return .stopped
                }
                acted = true
            }
            let now = MonotonicClock.seconds()
            if acted || (dirty && now - lastDrawn >= interval) {
                for s in item.update(picture()) { bus.emit(path: s.path, interface: s.interface, member: s.member, arguments: s.arguments) }
                dirty = false
                lastDrawn = MonotonicClock.seconds()
            }
            // A blocking call above (registering) may have read a panel's calls off the socket
            // into libdbus's queue, where poll cannot see them: dispatch those first.
            let timeout: Int32 = bus.hasQueuedMessages ? 0
                : dirty ? Int32(saturating: max(1, ((lastDrawn + interval) - MonotonicClock.seconds()) * 1000)) : -1
            for i in fds.indices { fds[i].revents = 0 }
            if poll(&fds, nfds_t(fds.count), timeout) < 0 && errno != EINTR {
                throw BusError("status icon", message: "poll: \(String(cString: strerror(errno)))")
            }
            if fds[2].revents != 0 { return .stopped }
            if fds[1].revents != 0, drain() { dirty = true }
        }
    }

    /// Tells the panel's watcher about the item; false (after saying so once) when no panel
    /// that shows status icons is running.
    private func register(_ name: String, on bus: BusConnection, saidWaiting: Bool) -> Bool {
        do {
            _ = try bus.call(destination: Self.watcherName, path: Self.watcherPath, interface: Self.watcherName,
                             member: "RegisterStatusNotifierItem", arguments: [.string(name)], timeoutMilliseconds: 5000)
            Log.info("status icon: shown by the panel (registered with its StatusNotifierWatcher as \(name))")
            return true
        } catch {
            if !saidWaiting {
                if error.isServiceUnknown || error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                    Log.info("status icon: no panel that shows status icons is running (no StatusNotifierWatcher on the session bus); waiting for one to start")
                } else {
                    Log.warning("status icon: the panel's StatusNotifierWatcher refused the item (\(error)); waiting for it to start again")
                }
            }
            return false
        }
    }
}
