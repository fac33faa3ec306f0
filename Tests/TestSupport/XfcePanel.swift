import Foundation
import Platform
import Glibc

/// A real panel that hosts StatusNotifierItems: `xfce4-panel` on a `VirtualDisplay`, on a
/// private session bus, with a configuration of its own (one panel along the top of the
/// screen, 32 pixels high, holding an expanding separator and the "systray" plugin, so the
/// tray sits at the right end as on a desktop).
///
/// The systray plugin runs in a separate process (`wrapper-2.0`, which embeds its window in
/// the panel's) and owns `org.kde.StatusNotifierWatcher` itself. The panel keeps its settings
/// in xfconf, so this starts an `xfconfd` of its own too: one that D-Bus activation would
/// start gets the bus daemon's environment, and with it the real home's configuration.
///
/// The tray lays its items out left to right in squares as high as the panel; the plugin's
/// window is as wide as they are (one pixel when the tray is empty), so the items' places
/// follow from that window's geometry.
public final class XfcePanel: @unchecked Sendable {
    // Sendable by construction: every property but `stopped` is only set in init; `stopped`
    // is only touched under `lock`; the processes are only stopped from `stop()`/deinit, and
    // ChildProcess is thread-safe for that.

    /// A rectangle on the screen, in pixels from its top left corner.
    public struct Area: Sendable, Equatable, CustomStringConvertible {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int

        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x; self.y = y; self.width = width; self.height = height
        }

        public var center: (x: Int, y: Int) { (x + width / 2, y + height / 2) }

        /// The smallest rectangle holding both.
        public func union(_ other: Area) -> Area {
            let left = min(x, other.x), top = min(y, other.y)
            let right = max(x + width, other.x + other.width), bottom = max(y + height, other.y + other.height)
            return Area(x: left, y: top, width: right - left, height: bottom - top)
        }

        /// ImageMagick's geometry, `WxH+X+Y`.
        public var geometry: String { "\(width)x\(height)+\(x)+\(y)" }
        public var description: String { geometry }
    }

    public static let panelExecutable = "/usr/bin/xfce4-panel"
    /// The panel's height in pixels (its window has one more, for its border).
    public static let size = 32

    /// Folder of the panel's home, configuration, cache and logs.
    public let folder = TemporaryFolder("iu-xfce-panel")
    /// What the panel and xfconfd run with: the display, the bus, and a home of their own.
    public let environment: [String: String]
    /// The X window id of the panel, for `import -window`.
    public let panelWindow: String
    /// Where the panel is on the screen.
    public let panelArea: Area
    /// Seconds from starting xfconfd until the tray owned the watcher name and its window was in the panel.
    public private(set) var startupSeconds: Double

    private let display: VirtualDisplay
    private let xfconfd: ChildProcess
    private let panel: ChildProcess
    private let lock = NSLock()
    private var stopped = false

    /// Starts xfconfd and the panel on `display` and the bus whose environment is
    /// `busEnvironment` (`DBUS_SESSION_BUS_ADDRESS`), and waits until the tray owns
    /// `org.kde.StatusNotifierWatcher` and the panel is on the screen.
    public init(display: VirtualDisplay, busEnvironment: [String: String], timeout: Double = 30) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.panelExecutable) else {
            throw TestFailure("\(Self.panelExecutable) is missing: `make test` installs xfce4-panel")
        }
        let xfconfdPath = Self.xfconfdPath()
        guard FileManager.default.isExecutableFile(atPath: xfconfdPath) else {
            throw TestFailure("\(xfconfdPath) is missing: `make test` installs xfce4-panel, which brings xfconf")
        }
        for tool in ["/usr/bin/dbus-send", "/usr/bin/xprop", "/usr/bin/xwininfo"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw TestFailure("\(tool) is missing: `make test` installs dbus and x11-utils")
        }
        guard busEnvironment["DBUS_SESSION_BUS_ADDRESS"] != nil else {
            throw TestFailure("XfcePanel needs DBUS_SESSION_BUS_ADDRESS in the bus environment")
        }
        self.display = display

        let root = folder.path
        for sub in ["home", "config", "cache", "data", "runtime"] {
            try FileManager.default.createDirectory(atPath: root + "/" + sub, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        try folder.file("config/xfce4/xfconf/xfce-perchannel-xml/xfce4-panel.xml", bytes: Array(Self.configuration.utf8))
        environment = display.environment.merging(busEnvironment) { _, b in b }.merging([
            "PATH": "/usr/bin:/bin",
            "HOME": root + "/home",
            "XDG_CONFIG_HOME": root + "/config",
            "XDG_CACHE_HOME": root + "/cache",
            "XDG_DATA_HOME": root + "/data",
            "XDG_RUNTIME_DIR": root + "/runtime",
            "LANG": "C.UTF-8",
            "GDK_BACKEND": "x11",
            // No accessibility bus and no dconf on the private bus: without these GTK asks for both.
            "NO_AT_BRIDGE": "1",
            "GSETTINGS_BACKEND": "memory",
        ]) { _, b in b }

        let busTool = busEnvironment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }
        if try Self.nameHasOwner("org.xfce.Xfconf", environment: busTool) {
            throw TestFailure("org.xfce.Xfconf is already owned on this bus: XfcePanel needs a bus without xfconfd, to start one that reads its own configuration")
        }
        if try Self.nameHasOwner("org.kde.StatusNotifierWatcher", environment: busTool) {
            throw TestFailure("org.kde.StatusNotifierWatcher is already owned on this bus: the panel's tray would not host the items")
        }

        let started = Date()
        let xfconfd = try ChildProcess(xfconfdPath, [], environment: environment,
                                       output: .file(root + "/xfconfd.log"), error: .file(root + "/xfconfd.log"))
        do {
            try Self.waitForName("org.xfce.Xfconf", environment: busTool, timeout: timeout) {
                xfconfd.isRunning ? nil : "xfconfd exited with \(xfconfd.terminationStatus)"
            }
        } catch {
            Poll.kill9(xfconfd)
            throw TestFailure("\(error); xfconfd said: \(Self.read(root + "/xfconfd.log"))")
        }
        // No window manager to wait for, and no session manager.
        let panel: ChildProcess
        do {
            panel = try ChildProcess(Self.panelExecutable, ["--disable-wm-check", "--sm-client-disable"], environment: environment,
                                     output: .file(root + "/panel.log"), error: .file(root + "/panel.log"))
        } catch {
            Poll.kill9(xfconfd)
            throw error
        }
        self.xfconfd = xfconfd
        self.panel = panel
        do {
            try Self.waitForName("org.kde.StatusNotifierWatcher", environment: busTool, timeout: timeout) {
                panel.isRunning ? nil : "xfce4-panel exited with \(panel.terminationStatus)"
            }
            var found: (String, Area)?
            let deadline = Date().addingTimeInterval(timeout)
            while found == nil {
                found = try Self.findPanelWindow(display: display)
                if found == nil {
                    guard Date() < deadline else { throw TestFailure("no xfce4-panel window appeared within \(timeout) s") }
                    usleep(50_000)
                }
            }
            (panelWindow, panelArea) = found!
        } catch {
            Self.stop(panel: panel, xfconfd: xfconfd)
            throw TestFailure("\(error); xfce4-panel said: \(Self.read(root + "/panel.log"))")
        }
        startupSeconds = 0
        // The plugin's window is embedded a moment after the watcher name is taken.
        do {
            try Poll.until("the systray plugin's window is in the panel", seconds: timeout) { (try? trayArea()) != nil }
        } catch {
            stop()
            throw TestFailure("\(error); xfce4-panel said: \(log)")
        }
        startupSeconds = Date().timeIntervalSince(started)
    }

    public convenience init(display: VirtualDisplay, bus: SessionBusDaemon, timeout: Double = 30) throws {
        try self.init(display: display, busEnvironment: bus.environment, timeout: timeout)
    }

    deinit { stop() }

    /// What the panel and xfconfd wrote to stdout and stderr, for failure messages.
    public var log: String { Self.read(folder.path + "/xfconfd.log") + Self.read(folder.path + "/panel.log") }

    // MARK: The tray

    /// The systray plugin's window: where its items are. Empty, it is one pixel wide.
    public func trayArea() throws -> Area {
        // The plugin's process names its windows "wrapper-2.0"; the one inside the panel is the tray.
        let candidates = windows(className: "wrapper-2.0")
        var seen: [String] = []
        for window in candidates {
            // A window can go between the search and the question (a tooltip closing).
            guard let area = try? geometry(of: window) else { continue }
            seen.append("\(window) at \(area)")
            if area.y >= panelArea.y, area.y + area.height <= panelArea.y + panelArea.height,
               area.x >= panelArea.x, area.x + area.width <= panelArea.x + panelArea.width, area.height > 1 {
                return area
            }
        }
        throw TestFailure("no systray plugin window inside the panel (\(panelArea)); wrapper-2.0 windows: \(seen); \(log)")
    }

    /// The items in the tray, left to right, as the squares they take.
    public func trayIcons() throws -> [Area] {
        let tray = try trayArea()
        let side = tray.height
        return (0..<(tray.width / side)).map { Area(x: tray.x + $0 * side, y: tray.y, width: side, height: side) }
    }

    /// Waits until the tray shows at least `count` items and the panel stops changing (the
    /// icons drawn), with the pointer moved away so that no item is highlighted and no tooltip
    /// shows; returns the items.
    @discardableResult
    public func waitForTrayIcons(count: Int = 1, timeout: Double = 30) throws -> [Area] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let icons = try trayIcons()
            if icons.count >= count {
                try movePointerAway()
                _ = try display.settled(panelWindow)
                return icons
            }
            guard Date() < deadline else {
                throw TestFailure("the tray showed \(icons.count) of \(count) items within \(timeout) s; \(log)")
            }
            usleep(100_000)
        }
    }

    /// Clicks the tray's item number `index` (from the left) with `button` (1 left, 2 middle, 3 right).
    public func click(icon index: Int = 0, button: Int = 1) throws {
        let icons = try trayIcons()
        guard icons.indices.contains(index) else { throw TestFailure("the tray has \(icons.count) items, no item \(index)") }
        let (x, y) = icons[index].center
        try movePointer(x: x, y: y)
        try display.xdotool(["click", String(button)])
    }

    /// Moves the pointer to (`x`, `y`) and waits until it is there. (`mousemove --sync` waits
    /// for the pointer to move, which takes a long time to give up when it is there already.)
    public func movePointer(x: Int, y: Int) throws {
        let location = try display.xdotool(["getmouselocation", "--shell"])
        if location.contains("X=\(x)\n"), location.contains("Y=\(y)\n") { return }
        try display.xdotool(["mousemove", "--sync", String(x), String(y)])
    }

    /// Puts the pointer near the screen's bottom right corner, off the panel.
    public func movePointerAway() throws {
        let size = try display.xdotool(["getdisplaygeometry"]).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard size.count == 2 else { throw TestFailure("xdotool getdisplaygeometry said \(size)") }
        try movePointer(x: size[0] - 10, y: size[1] - 10)
    }

    // MARK: Menus

    /// Right-clicks the tray's item number `index` and waits for its menu to be on the screen
    /// and drawn; returns the menu's window id and where it is.
    @discardableResult
    public func openMenu(ofIcon index: Int = 0, button: Int = 3, timeout: Double = 10) throws -> (window: String, area: Area) {
        let before = Set(popupMenus())
        try click(icon: index, button: button)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let menu = popupMenus().first(where: { !before.contains($0) }) {
                let area = try geometry(of: menu)
                if area.width > 1, area.height > 1 {
                    _ = try display.settled(menu)
                    return (menu, try geometry(of: menu))
                }
            }
            if Date() >= deadline { break }
            usleep(50_000)
        }
        throw TestFailure("no menu opened within \(timeout) s of clicking tray item \(index) with button \(button); \(log)")
    }

    /// The mapped popup menus on the screen (window type `_NET_WM_WINDOW_TYPE_POPUP_MENU`,
    /// which a tooltip does not have).
    public func popupMenus() -> [String] {
        windows(className: "").filter { window in
            let r = try? Shell.capture("/usr/bin/xprop", ["-id", window, "_NET_WM_WINDOW_TYPE"], environment: toolEnvironment)
            return r?.stdout.contains("_NET_WM_WINDOW_TYPE_POPUP_MENU") ?? false
        }
    }

    /// Presses Escape and waits until no menu is open.
    public func closeMenus(timeout: Double = 10) throws {
        try display.xdotool(["key", "Escape"])
        try Poll.until("the tray's menu closes", seconds: timeout) { popupMenus().isEmpty }
    }

    /// Chooses the open menu's entry number `index` (0 the first; separators and disabled
    /// entries do not count) with the keyboard, as a person may.
    public func chooseMenuEntry(_ index: Int) throws {
        try display.xdotool(["key", "--delay", "60"] + Array(repeating: "Down", count: index + 1) + ["Return"])
    }

    // MARK: Screenshots

    /// Saves the panel as a PNG at `path`.
    public func screenshot(to path: String) throws {
        try capture(window: panelWindow, to: path)
    }

    /// Saves one window (the panel, a menu) as a PNG at `path`.
    public func capture(window: String, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Shell.run("/usr/bin/import", ["-window", window, path], environment: toolEnvironment)
    }

    /// Saves the part of the screen holding the panel and the open menu as a PNG at `path`.
    public func screenshotWithMenu(_ menu: Area, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let area = panelArea.union(menu)
        try Shell.run("/usr/bin/import", ["-window", "root", "-crop", area.geometry, "+repage", path], environment: toolEnvironment)
    }

    // MARK: Stopping

    /// Stops the panel (and with it the tray's process) and xfconfd; waits until all are gone.
    public func stop() {
        lock.lock()
        let first = !stopped
        stopped = true
        lock.unlock()
        if first { Self.stop(panel: panel, xfconfd: xfconfd) }
    }

    /// SIGTERM to the panel, which ends its plugins' processes and waits for them; SIGKILL to
    /// whatever of it is left after a few seconds. Then xfconfd.
    private static func stop(panel: ChildProcess, xfconfd: ChildProcess) {
        let plugins = descendants(of: panel.processIdentifier)
        panel.stop(grace: 5)
        for pid in plugins where isAlive(pid) { kill(pid, SIGKILL) }
        let deadline = Date().addingTimeInterval(5)
        while plugins.contains(where: isAlive), Date() < deadline { usleep(20_000) }
        xfconfd.stop(grace: 5)
    }

    /// The processes below `pid`, children first.
    private static func descendants(of pid: pid_t) -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let children = tasks.flatMap { task in
            read("/proc/\(pid)/task/\(task)/children").split(separator: " ").compactMap { pid_t($0) }
        }
        return children + children.flatMap { descendants(of: $0) }
    }

    /// Whether `pid` still runs (a zombie waiting for its parent does not).
    private static func isAlive(_ pid: pid_t) -> Bool {
        let stat = read("/proc/\(pid)/stat")
        guard let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != nil && state != "Z" && state != "X"
    }

    // MARK: Helpers

    /// This process's environment pointed at the display, for xdotool, xprop and ImageMagick.
    private var toolEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.merging(display.environment) { _, b in b }
    }

    /// The mapped windows whose WM_CLASS instance or class is `className`; every mapped window when it is empty.
    private func windows(className: String) -> [String] {
        let pattern = className.isEmpty ? "" : "^" + NSRegularExpression.escapedPattern(for: className) + "$"
        let r = try? Shell.capture("/usr/bin/xdotool", ["search", "--onlyvisible", "--classname", pattern], environment: toolEnvironment)
        return (r?.stdout ?? "").split(separator: "\n").map(String.init)
    }

    /// Where `window` is on the screen (xwininfo's absolute position, right for windows inside others too).
    private func geometry(of window: String) throws -> Area {
        try Self.geometry(of: window, environment: toolEnvironment)
    }

    private static func geometry(of window: String, environment: [String: String]) throws -> Area {
        let text = try Shell.run("/usr/bin/xwininfo", ["-id", window], environment: environment)
        func value(_ label: String) throws -> Int {
            guard let line = text.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }),
                  let number = Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") else {
                throw TestFailure("xwininfo gave no \"\(label)\" for window \(window): \(text)")
            }
            return number
        }
        return Area(x: try value("Absolute upper-left X"), y: try value("Absolute upper-left Y"),
                    width: try value("Width"), height: try value("Height"))
    }

    /// The panel's mapped window with its area, once it has its full height.
    private static func findPanelWindow(display: VirtualDisplay) throws -> (String, Area)? {
        let environment = ProcessInfo.processInfo.environment.merging(display.environment) { _, b in b }
        let r = try Shell.capture("/usr/bin/xdotool", ["search", "--onlyvisible", "--classname", "^xfce4-panel$"], environment: environment)
        for window in r.stdout.split(separator: "\n").map(String.init) {
            let area = try geometry(of: window, environment: environment)
            if area.height >= size, area.width > size { return (window, area) }
        }
        return nil
    }

    /// Where xfconfd is: the program its D-Bus service file starts.
    private static func xfconfdPath() -> String {
        let service = read("/usr/share/dbus-1/services/org.xfce.Xfconf.service")
        if let line = service.split(separator: "\n").first(where: { $0.hasPrefix("Exec=") }) {
            return String(line.dropFirst("Exec=".count)).trimmingCharacters(in: .whitespaces)
        }
        return "/usr/lib/x86_64-linux-gnu/xfce4/xfconf/xfconfd"
    }

    /// Whether `name` has an owner on the bus of `environment`.
    public static func nameHasOwner(_ name: String, environment: [String: String]) throws -> Bool {
        let r = try Shell.capture("/usr/bin/dbus-send", ["--session", "--print-reply=literal", "--dest=org.freedesktop.DBus",
                                                         "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:" + name],
                                  environment: environment)
        guard r.status == 0 else { throw TestFailure("cannot ask the bus whether \(name) is owned: \(r.stderr)") }
        return r.stdout.contains("true")
    }

    /// Polls until `name` is owned; `failure` tells why to give up early (the owner-to-be exited).
    private static func waitForName(_ name: String, environment: [String: String], timeout: Double,
                                    failure: () -> String?) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if try nameHasOwner(name, environment: environment) { return }
            if let reason = failure() { throw TestFailure("\(name) never got an owner: \(reason)") }
            guard Date() < deadline else { throw TestFailure("\(name) got no owner within \(timeout) s") }
            usleep(50_000)
        }
    }

    private static func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// The panel's configuration (xfconf channel `xfce4-panel`): one panel, snapped to the top
    /// left corner (`p=6`) and as long as the screen, with a separator that takes the free room
    /// and the tray. The tray shows every item (none hidden by default), each in a square, with
    /// 22-pixel icons.
    static let configuration = """
        <?xml version="1.0" encoding="UTF-8"?>
        <channel name="xfce4-panel" version="1.0">
          <property name="configver" type="int" value="2"/>
          <property name="panels" type="array">
            <value type="int" value="1"/>
            <property name="panel-1" type="empty">
              <property name="position" type="string" value="p=6;x=0;y=0"/>
              <property name="length" type="uint" value="100"/>
              <property name="position-locked" type="bool" value="true"/>
              <property name="size" type="uint" value="\(size)"/>
              <property name="icon-size" type="uint" value="0"/>
              <property name="plugin-ids" type="array">
                <value type="int" value="1"/>
                <value type="int" value="2"/>
              </property>
            </property>
          </property>
          <property name="plugins" type="empty">
            <property name="plugin-1" type="string" value="separator">
              <property name="expand" type="bool" value="true"/>
              <property name="style" type="uint" value="0"/>
            </property>
            <property name="plugin-2" type="string" value="systray">
              <property name="square-icons" type="bool" value="true"/>
              <property name="icon-size" type="int" value="22"/>
              <property name="single-row" type="bool" value="true"/>
              <property name="hide-new-items" type="bool" value="false"/>
              <property name="menu-is-primary" type="bool" value="false"/>
              <property name="symbolic-icons" type="bool" value="false"/>
            </property>
          </property>
        </channel>
        """
}
