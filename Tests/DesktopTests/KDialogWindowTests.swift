import Foundation
import Glibc
import Testing
import TestSupport

/// `share-to` without `--to` on KDE: the real kdialog in a real X server (Xvfb), driven with
/// xdotool as a person would, against the reference server.
@Suite("share-to's folder picker in kdialog windows", .serialized)
struct KDialogWindowTests {
    /// Waits for the window titled exactly `title` and checks it is kdialog's, not zenity's.
    @discardableResult
    static func waitForKDialog(_ display: VirtualDisplay, titled title: String) throws -> String {
        // xdotool matches WM_NAME, which Qt sets to the bare title (" — KDialog" is only in _NET_WM_NAME).
        let window = try display.waitForWindow(named: "^" + title + "$")
        let kdialogs = try display.xdotool(["search", "--class", "kdialog"]).split(separator: "\n").map(String.init)
        guard kdialogs.contains(window) else { throw TestFailure("the window \"\(title)\" is not kdialog's") }
        return window
    }

    /// What share-to sees on a KDE desktop with kdialog installed.
    static func kdeEnvironment(_ base: [String: String], display: VirtualDisplay) throws -> [String: String] {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/kdialog") else {
            throw TestFailure("/usr/bin/kdialog is missing: `make test` installs kdialog")
        }
        var environment = base.merging(display.environment) { _, b in b }
        environment["XDG_CURRENT_DESKTOP"] = "KDE"
        // Qt picks the X11 plugin from DISPLAY; a Wayland socket of the test's own session must not lure it away.
        environment["QT_QPA_PLATFORM"] = "xcb"
        environment["WAYLAND_DISPLAY"] = nil
        return environment
    }

    /// Waits until the window titled exactly `title` has gone: kdialog's input box and the
    /// message after it share a title, and so do a menu and its return after that message.
    /// (A new kdialog takes a moment to start, so the gap between them is seen.)
    static func gone(_ display: VirtualDisplay, titled title: String, within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !display.windows(named: "^" + title + "$").isEmpty {
            guard Date() < deadline else { return false }
            usleep(50_000)
        }
        return true
    }

    /// Types `text`, then Return, into kdialog's window titled `title`, until that window
    /// closes. Qt drops keys that arrive before a new window is ready for them, and no X event
    /// tells when that is. Keys lost in a menu would leave its first row ("Send here") chosen,
    /// so the window must be seen to change (the selection moving, the text appearing) before
    /// Return is pressed; until it does, the text is typed again. `replacing` empties an input
    /// box first. `moves: false` is for text that selects what is already selected.
    static func answer(_ display: VirtualDisplay, titled title: String, typing text: String = "",
                       replacing: Bool = false, moves: Bool = true) throws {
        for _ in 1...4 {
            let window = try waitForKDialog(display, titled: title)
            if replacing { try display.xdotool(["key", "ctrl+a", "BackSpace"]) }
            if !text.isEmpty {
                let before = moves ? try display.settled(window) : []
                try display.type(text)
                // The keys went nowhere: let the search Qt keeps for typed text lapse, then type again.
                if moves, !display.changes(window, from: before, within: 3) { continue }
            }
            try display.xdotool(["key", "Return"])
            if gone(display, titled: title, within: 10) { return }
        }
        throw TestFailure("the window \"\(title)\" did not take \"\(text)\" in four tries (windows now: \(display.titles()))")
    }

    @Test("two files without --to on KDE: kdialog's menus browse into a folder, its input box names a new one, its message box tells a clash; both files arrive")
    func browseCreateAndSend() throws {
        let server = try ReferenceServer()
        // A name that looks like markup: kdialog must show it as it is (see the screenshots).
        let existing = "Existing <b>&amp;"
        try server.makeFolder(existing + "/Inner")
        _ = FileManager.default.createFile(atPath: server.tree() + "/" + existing + "/clash.txt", contents: Data("a file".utf8))
        let session = try AgentHarness()
        try session.addAccount(server)
        try session.startAgent()
        let display = try VirtualDisplay()
        let first = try session.home.file("desk/first photo.jpg", bytes: Array("first".utf8))
        let second = try session.home.file("desk/second.txt", bytes: Array("second".utf8))

        let environment = try Self.kdeEnvironment(session.environment, display: display)
        let shareTo = try SharePickerWindowTests.Running([SharePickerWindowTests.uri(first), second], environment: environment)
        let shots = Repository.artifacts + "/share-to-kdialog"
        let top = "Send 2 files to home: /", inExisting = top + existing, newFolder = "New folder in /" + existing

        // What happened when, for a failure to say where the time went.
        let started = Date()
        var steps: [String] = []
        func step(_ name: String) { steps.append(String(format: "%.1f s %@", Date().timeIntervalSince(started), name)) }
        do {
            try Self.waitForKDialog(display, titled: top)
            step("menu of /")
            try display.screenshot(to: shots + "-1-top.png")
            // The menu is a list: typing a row's beginning selects it, Return answers with its key.
            try Self.answer(display, titled: top, typing: "Existing")
            try Self.waitForKDialog(display, titled: inExisting)
            step("menu of /Existing")
            try display.screenshot(to: shots + "-2-existing.png")

            // A file already has the name: kdialog's error box says so, Return closes it, the menu is back.
            try Self.answer(display, titled: inExisting, typing: "New folder")
            try Self.waitForKDialog(display, titled: newFolder)
            step("input box")
            try Self.answer(display, titled: newFolder, typing: "clash.txt", replacing: true)
            try Self.waitForKDialog(display, titled: newFolder)
            step("error box")
            try display.screenshot(to: shots + "-3-clash.png")
            try Self.answer(display, titled: newFolder)
            try Self.waitForKDialog(display, titled: inExisting)
            step("menu of /Existing again")

            try Self.answer(display, titled: inExisting, typing: "New folder")
            try Self.waitForKDialog(display, titled: newFolder)
            step("input box again")
            try display.type("Fresh")
            try display.screenshot(to: shots + "-4-new-folder.png")
            try Self.answer(display, titled: newFolder, typing: "Fresh", replacing: true)
            try Self.waitForKDialog(display, titled: inExisting + "/Fresh")
            step("menu of /Existing/Fresh")
            try display.screenshot(to: shots + "-5-fresh.png")
            try Self.answer(display, titled: inExisting + "/Fresh", typing: "Send here", moves: false)
        } catch {
            try? display.screenshot(to: shots + "-failed.png")
            throw TestFailure("""
                \(error)
                steps: \(steps.joined(separator: "; "))
                share-to is \(shareTo.process.isRunning ? "still running" : "gone"); it printed: \(shareTo.read("stdout")) \(shareTo.read("stderr"))
                (the screen is in \(shots)-failed.png)
                """)
        }

        let result = try shareTo.wait()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("queued 2 files for home:/\(existing)/Fresh"), "\(result.stdout)")
        try session.waitForAll("completed", count: 2)
        let fresh = server.tree() + "/" + existing + "/Fresh"
        #expect(try String(contentsOfFile: fresh + "/first photo.jpg", encoding: .utf8) == "first")
        #expect(try String(contentsOfFile: fresh + "/second.txt", encoding: .utf8) == "second")
        #expect(try String(contentsOfFile: server.tree() + "/" + existing + "/clash.txt", encoding: .utf8) == "a file")
    }

    @Test("closing kdialog's menu with Escape queues nothing and exits 1 without a word")
    func cancel() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        let display = try VirtualDisplay()
        let file = try session.home.file("desk/a.jpg", bytes: [1])
        let shareTo = try SharePickerWindowTests.Running([file], environment: Self.kdeEnvironment(session.environment, display: display))
        try Self.waitForKDialog(display, titled: "Send a.jpg to home: /")
        try display.xdotool(["key", "Escape"])
        let result = try shareTo.wait()
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty, "\(result.stdout)")
        #expect(!result.stderr.contains("queued"), "\(result.stderr)")
        #expect(try session.items().isEmpty)
    }
}
