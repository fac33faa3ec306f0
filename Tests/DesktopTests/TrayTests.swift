import Foundation
import Glibc
import Platform
import Testing
import TestSupport

/// `instant-upload tray` on a private session bus, shown by a panel stand-in
/// (sni-watcher.py) that reads it the way panels do: properties, then the menu, again after
/// every change signal.
@Suite("The status icon")
struct TrayTests {
    @Test("the icon, its Status and tooltip follow the queue through idle, uploading, offline and paused; Pause all and Resume all do what they say")
    func followsTheQueue() throws {
        let net = try TestNetwork()
        let server = try ReferenceServer(namespace: net.server, host: net.serverAddress)
        try server.makeFolder("Trip")
        let s = try AgentHarness()
        s.namespace = net.agent
        try s.writeConfig("[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 1\nstall_seconds = 30\n")
        try s.addAccount(server)
        let bus = try SessionBusDaemon()
        defer { bus.stop() }
        let panel = try PanelStandIn(bus: bus)
        defer { panel.stop() }
        let tray = try TrayProcess(s, bus: bus)
        defer { tray.stop() }

        var seen = try panel.waitFor("the idle icon") { $0.status == "Passive" && $0.icon == "emblem-default" }
        #expect(seen.body.hasPrefix("nothing queued"), "\(seen.body)")
        #expect(seen.labels.contains("Pause all") && seen.labels.contains("Show queue") && seen.labels.contains("Quit tray"))
        #expect(!seen.itemIsMenu, "a left click activates; the menu is for the right one")

        // Uploading: one large file over a slow link.
        try net.throttle("8mbit")
        let big = try s.home.randomFile("trip/v.mp4", size: 12_000_000, seed: 7)
        #expect(try s.cli(["upload", "--to", "/Trip", big]).status == 0)
        try s.startAgent()
        seen = try panel.waitFor("the uploading icon") { $0.status == "Active" && $0.icon == "network-transmit" && $0.body.hasPrefix("1 uploading") }

        // Offline: the link goes down; the icon waits and says why, in status's words.
        try net.linkDown()
        // Once the row, too, waits for the network: the pause is written a moment before it.
        seen = try panel.waitFor("the offline icon") {
            $0.status == "Active" && $0.icon == "media-playback-pause" && $0.body.hasPrefix("1 waiting for network")
        }
        let status = try s.cli(["status"]).stdout
        #expect(seen.body == status.trimmingCharacters(in: .newlines), "the tooltip is the status line: \(seen.body) / \(status)")
        try net.linkUp()
        seen = try panel.waitFor("uploading again") { $0.icon == "network-transmit" }

        // Pause all, from the menu: the queue holds; Resume all lets it go on.
        try panel.click("Pause all")
        seen = try panel.waitFor("the paused icon") { $0.icon == "media-playback-pause" && $0.labels.contains("Resume all") && $0.body.contains("paused by you") }
        #expect(!seen.labels.contains("Pause all"))
        #expect(try s.cli(["status"]).stdout.contains("paused by you"))
        try panel.click("Resume all")
        try s.waitForAll("completed", count: 1, timeout: 90)
        seen = try panel.waitFor("all done") { $0.status == "Passive" && $0.icon == "emblem-default" }
        #expect(!(try s.cli(["status"]).stdout.contains("paused")))
        #expect(seen.labels.contains { $0.hasPrefix("v.mp4  (/Trip on home)") }, "the last file uploaded: \(seen.labels)")

        #expect(panel.registrations == 1, "registered once, not again on every change")
        #expect(tray.isRunning, "\(tray.log)")
    }

    @Test("a failed upload turns the icon to attention with its reason in the menu; Retry 1 failed sends it again")
    func failedAndRetried() throws {
        let server = try ReferenceServer()
        try server.makeFolder("Trip")
        let s = try AgentHarness()
        try s.writeConfig("[agent]\nautostart = false\n")
        try s.addAccount(server)
        let bus = try SessionBusDaemon()
        defer { bus.stop() }
        let panel = try PanelStandIn(bus: bus)
        defer { panel.stop() }
        let tray = try TrayProcess(s, bus: bus)
        defer { tray.stop() }
        try s.startAgent()
        var seen = try panel.waitFor("the idle icon") { $0.status == "Passive" }

        // Failed: the server refuses one upload once; the icon asks for attention, and
        // "Retry 1 failed" sends it again.
        try server.fault(["method": "POST", "status": 403, "count": 1])
        let small = try s.home.file("trip/note_1.txt", bytes: Array("a note".utf8))
        #expect(try s.cli(["upload", "--to", "/Trip", small]).status == 0)
        seen = try panel.waitFor("the attention icon") { $0.status == "NeedsAttention" && $0.icon == "dialog-warning" && $0.labels.contains("Retry 1 failed") }
        #expect(seen.body.contains("1 failed"), "\(seen.body)")
        #expect(seen.labels.contains { $0.hasPrefix("#") && $0.contains("note_1.txt: ") }, "the failure's reason in the submenu: \(seen.labels)")
        try panel.click("Retry 1 failed")
        try s.waitForAll("completed", count: 1, timeout: 60)
        seen = try panel.waitFor("all done again") { $0.status == "Passive" && !$0.labels.contains("Retry 1 failed") }
        #expect(try String(contentsOfFile: server.tree() + "/Trip/note_1.txt", encoding: .utf8) == "a note")
        #expect(!seen.labels.contains { $0.contains("failed") })

        // Watch rules: each with its state, paused and resumed from the menu.
        let camera = s.home.path + "/Camera"
        try FileManager.default.createDirectory(atPath: camera, withIntermediateDirectories: true)
        let added = try s.cli(["watch", "add", camera, "--to", "/Trip", "--name", "cam"])
        #expect(added.status == 0, "\(added.stderr)")
        seen = try panel.waitFor("the rule in the menu") { $0.labels.contains("Pause cam") }
        #expect(seen.labels.contains { $0.hasPrefix("cam: watching ") }, "\(seen.labels)")
        try panel.click("Pause cam")
        seen = try panel.waitFor("the rule paused") { $0.labels.contains("Resume cam") && $0.labels.contains("cam: paused") }
        #expect(try s.cli(["watch", "list"]).stdout.contains("paused"))
        try panel.click("Resume cam")
        _ = try panel.waitFor("the rule going again") { $0.labels.contains("Pause cam") }
        #expect(tray.isRunning, "\(tray.log)")
    }

    @Test("Send files…: a file chooser (two files, one with a space), then share-to's folder picker in a window; both arrive. A file uploaded lately, clicked, puts its path on the clipboard")
    func sendFilesAndCopyPath() throws {
        let server = try ReferenceServer()
        let s = try AgentHarness()
        try s.writeConfig("[agent]\nautostart = false\n")
        try s.addAccount(server)
        try s.startAgent()
        let display = try VirtualDisplay()
        let bus = try SessionBusDaemon()
        defer { bus.stop() }
        let panel = try PanelStandIn(bus: bus)
        defer { panel.stop() }
        let photo = try s.home.file("desk/beach photo.jpg", bytes: Array("sand".utf8))
        let second = try s.home.file("desk/second.jpg", bytes: Array("sea".utf8))
        // The person's choice in the file chooser stands in for the chooser (GTK's own dialog
        // is not what is tested); every other zenity call, share-to's folder picker among
        // them, is the real one in the window. A clipboard program writes down what it got.
        let fake = TemporaryFolder("iu-desktop-tools")
        let chooserCalls = fake.path + "/chooser"
        let clipboard = fake.path + "/clipboard"
        try fake.file("zenity", bytes: Array("""
            #!/bin/sh
            case "$*" in
              *--file-selection*) echo "$*" > '\(chooserCalls)'; printf '%s\\n%s\\n' '\(photo)' '\(second)'; exit 0 ;;
            esac
            exec /usr/bin/zenity "$@"

            """.utf8))
        try fake.file("xclip", bytes: Array("#!/bin/sh\necho \"$*\" > '\(clipboard).args'\ncat > '\(clipboard)'\n".utf8))
        chmod(fake.path + "/zenity", 0o755)
        chmod(fake.path + "/xclip", 0o755)
        var extra = display.environment
        extra["PATH"] = fake.path + ":/usr/bin:/bin"
        extra["XDG_CURRENT_DESKTOP"] = "XFCE"
        // GTK needs the system's data (its settings schemas).
        extra["XDG_DATA_DIRS"] = "/usr/local/share:/usr/share"
        let tray = try TrayProcess(s, bus: bus, extra: extra)
        defer { tray.stop() }
        _ = try panel.waitFor("the icon") { $0.status == "Passive" }

        try panel.click("Send files…")
        do { _ = try display.waitForWindow(named: "Send 2 files to home: /$", timeout: 60) } catch {
            throw TestFailure("\(error); the tray said: \(tray.log)")
        }
        let asked = (try? String(contentsOfFile: chooserCalls, encoding: .utf8)) ?? ""
        #expect(asked.contains("--file-selection --multiple") && asked.contains("Send files to your server"), "\(asked)")
        try display.screenshot(to: Repository.artifacts + "/tray-send-files-picker.png")
        try display.type("Send here", thenPress: "Return")
        try s.waitForAll("completed", count: 2)
        #expect(try String(contentsOfFile: server.tree() + "/beach photo.jpg", encoding: .utf8) == "sand")
        #expect(try String(contentsOfFile: server.tree() + "/second.jpg", encoding: .utf8) == "sea")

        // The tray may show the first file done while the second still goes (the icon active);
        // once both are done, it rests with the file listed.
        let seen = try panel.waitFor("the files among the last uploaded, the icon at rest") {
            $0.labels.contains("beach photo.jpg  (/ on home)") && $0.status == "Passive"
        }
        #expect(seen.status == "Passive")
        try panel.click("beach photo.jpg  (/ on home)")
        try waitUntil("the path on the clipboard") { (try? String(contentsOfFile: clipboard, encoding: .utf8)) == "/beach photo.jpg" }
        #expect((try? String(contentsOfFile: clipboard + ".args", encoding: .utf8)) == "-selection clipboard\n")
    }

    @Test("a left click opens the queue in the desktop's terminal; Quit tray ends the icon with status 0")
    func activateAndQuit() throws {
        let s = try AgentHarness()
        let bus = try SessionBusDaemon()
        defer { bus.stop() }
        let panel = try PanelStandIn(bus: bus)
        defer { panel.stop() }
        // A terminal that writes down what it was asked to run.
        let fake = TemporaryFolder("iu-terminal")
        let calls = fake.path + "/calls"
        try fake.file("x-terminal-emulator", bytes: Array("#!/bin/sh\nprintf '%s\\n' \"$*\" >> '\(calls)'\n".utf8))
        chmod(fake.path + "/x-terminal-emulator", 0o755)
        let tray = try TrayProcess(s, bus: bus, extra: ["PATH": fake.path + ":/usr/bin:/bin"])
        defer { tray.stop() }
        _ = try panel.waitFor("the icon") { $0.status == "Passive" }
        try panel.activate()
        // The shell makes the file before printf writes the line into it: wait for the line.
        try waitUntil("the terminal was started") { (try? String(contentsOfFile: calls, encoding: .utf8))?.hasSuffix("\n") == true }
        let line = try String(contentsOfFile: calls, encoding: .utf8)
        #expect(line.hasPrefix("-e ") && line.hasSuffix("/instant-upload queue --follow\n"), "\(line)")
        try panel.click("Quit tray")
        try waitUntil("the tray ended", seconds: 10) { !tray.isRunning }
        #expect(tray.status == 0, "\(tray.log)")
    }

    @Test("with no session bus the tray exits 0 at once and says why")
    func noBus() throws {
        let s = try AgentHarness()
        s.environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        let r = try s.cli(["tray"])
        #expect(r.status == 0)
        #expect(r.stderr.contains("no session bus") && r.stderr.contains("exiting"), "\(r.stderr)")
    }

    @Test("with no panel the tray waits quietly, says so once, and shows itself when a panel starts")
    func waitsForAPanel() throws {
        let s = try AgentHarness()
        let bus = try SessionBusDaemon()
        defer { bus.stop() }
        let tray = try TrayProcess(s, bus: bus)
        defer { tray.stop() }
        try waitUntil("the tray says it waits") { tray.log.contains("no panel that shows status icons is running") }
        let before = try tray.cpuTicks()
        usleep(3_000_000)
        let used = try tray.cpuTicks() - before
        #expect(used <= 5, "asleep while it waits, not spinning: \(used) ticks in 3 s")
        #expect(tray.isRunning)
        #expect(tray.log.components(separatedBy: "no panel").count == 2, "said once: \(tray.log)")
        let panel = try PanelStandIn(bus: bus)
        defer { panel.stop() }
        _ = try panel.waitFor("the icon, once the panel is there") { $0.status == "Passive" }
        #expect(tray.log.contains("shown by the panel"), "\(tray.log)")

        // A second tray on the same desktop (run by hand, or a second login entry) leaves.
        let second = try Shell.capture(Repository.binaries + "/instant-upload", ["tray"], environment: s.environment.merging(bus.environment) { $1 })
        #expect(second.status == 0 && second.stderr.contains("shows it on this desktop already"), "\(second.stderr)")
        #expect(tray.isRunning)
    }

    @Test("tray = false in the config: the tray exits 0 and says it is turned off")
    func turnedOff() throws {
        let s = try AgentHarness()
        try s.writeConfig("[agent]\ntray = false\n")
        let bus = try SessionBusDaemon()
        defer { bus.stop() }
        let r = try Shell.capture(Repository.binaries + "/instant-upload", ["tray"], environment: s.environment.merging(bus.environment) { $1 })
        #expect(r.status == 0)
        #expect(r.stderr.contains("turned off") && r.stderr.contains("tray = false"), "\(r.stderr)")
    }
}

/// `instant-upload tray` on the test's bus, with its log in a file. The icons are not
/// installed where it looks, so it shows freedesktop icon names.
final class TrayProcess: @unchecked Sendable {
    // Sendable by construction: set once in init.
    let process: ChildProcess
    let logPath: String

    init(_ session: AgentHarness, bus: SessionBusDaemon, extra: [String: String] = [:]) throws {
        logPath = session.home.path + "/tray.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let data = session.home.path + "/no-icons"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        process = try session.spawn(["tray"], environment: bus.environment.merging(["XDG_DATA_DIRS": data, "XDG_DATA_HOME": data]) { $1 }
                                        .merging(extra) { $1 }, output: .file(logPath), error: .file(logPath))
    }

    var isRunning: Bool { process.isRunning }
    var status: Int32 { process.terminationStatus }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// User and system CPU time so far, in clock ticks.
    func cpuTicks() throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    func stop() { if process.isRunning { kill9(process) } }
}

/// sni-watcher.py: a StatusNotifierWatcher and host that records each reading of the item.
final class PanelStandIn: @unchecked Sendable {
    // Sendable by construction: set once in init.
    struct Reading: Decodable {
        struct Entry: Decodable {
            var id: Int
            var depth: Int
            var label: String?
            var enabled: Bool?
            var type: String?
        }
        var status: String
        var icon: String
        var tooltip: [String]
        var item_is_menu: Bool
        var menu: [Entry]
        var registrations: Int

        var body: String { tooltip.count > 1 ? tooltip[1] : "" }
        var itemIsMenu: Bool { item_is_menu }
        /// The labels as a panel shows them (`__` is an underscore).
        var labels: [String] { menu.compactMap { $0.label?.replacingOccurrences(of: "__", with: "_") } }
    }

    static let script = Repository.root + "/Tests/DesktopTests/sni-watcher.py"
    let recordPath: String
    private let environment: [String: String]
    private let process: ChildProcess

    init(bus: SessionBusDaemon) throws {
        environment = bus.environment
        recordPath = bus.folder.path + "/panel-\(UUID().uuidString).jsonl"
        let log = recordPath + ".log"
        process = try ChildProcess("/usr/bin/python3", [Self.script, "--record", recordPath],
                                   environment: environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a },
                                   output: .file(log), error: .file(log))
        try waitUntil("the panel stand-in owns org.kde.StatusNotifierWatcher") { [process, recordPath] in
            guard process.isRunning else {
                throw TestFailure("sni-watcher.py exited: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
            return FileManager.default.fileExists(atPath: recordPath)
        }
    }

    func stop() { if process.isRunning { kill9(process) } }

    func readings() -> [Reading] {
        let text = (try? String(contentsOfFile: recordPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Reading.self, from: Data($0.utf8)) }
    }

    var registrations: Int { readings().last?.registrations ?? 0 }

    /// Waits until the latest reading satisfies `condition` and returns it.
    @discardableResult
    func waitFor(_ what: String, seconds: Double = 60, _ condition: (Reading) -> Bool) throws -> Reading {
        var found: Reading?
        do {
            try waitUntil(what, seconds: seconds) {
                guard let last = readings().last, condition(last) else { return false }
                found = last
                return true
            }
        } catch {
            let last = readings().last
            throw TestFailure("\(what): the panel last read \(last.map { "\($0.status) \($0.icon) \($0.body) \($0.labels)" } ?? "nothing")")
        }
        return found!
    }

    func click(_ label: String) throws {
        try Shell.run("/usr/bin/dbus-send", ["--session", "--dest=org.kde.StatusNotifierWatcher", "--type=method_call", "--print-reply",
                                             "/StatusNotifierWatcher", "org.instantupload.Test.Click", "string:\(label)"],
                      environment: environment)
    }

    func activate() throws {
        try Shell.run("/usr/bin/dbus-send", ["--session", "--dest=org.kde.StatusNotifierWatcher", "--type=method_call", "--print-reply",
                                             "/StatusNotifierWatcher", "org.instantupload.Test.Activate"], environment: environment)
    }
}
