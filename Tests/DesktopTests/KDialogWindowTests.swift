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

    @Test("two files without --to on KDE: kdialog's menus browse into a folder, its input box names a new one, confirm; both arrive there")
    func browseCreateAndSend() throws {
        let server = try ReferenceServer()
        // A name that looks like markup: kdialog must show it as it is (see the screenshots).
        try server.makeFolder("Existing <b>&amp;/Inner")
        let session = try AgentHarness()
        try session.addAccount(server)
        try session.startAgent()
        let display = try VirtualDisplay()
        let first = try session.home.file("desk/first photo.jpg", bytes: Array("first".utf8))
        let second = try session.home.file("desk/second.txt", bytes: Array("second".utf8))

        let environment = try Self.kdeEnvironment(session.environment, display: display)
        let shareTo = try SharePickerWindowTests.Running([SharePickerWindowTests.uri(first), second], environment: environment)
        let shots = Repository.artifacts + "/share-to-kdialog"

        do { try Self.waitForKDialog(display, titled: "Send 2 files to home: /") } catch {
            throw TestFailure("\(error); share-to said: \(shareTo.read("stderr"))")
        }
        try display.screenshot(to: shots + "-1-top.png")
        // The menu is a list: typing a row's beginning selects it, Return answers with its key.
        try display.type("Existing", thenPress: "Return")
        try Self.waitForKDialog(display, titled: "Send 2 files to home: /Existing <b>&amp;")
        try display.screenshot(to: shots + "-2-existing.png")
        try display.type("New folder", thenPress: "Return")
        try Self.waitForKDialog(display, titled: "New folder in /Existing <b>&amp;")
        try display.type("Fresh")
        try display.screenshot(to: shots + "-3-new-folder.png")
        try display.xdotool(["key", "Return"])
        try Self.waitForKDialog(display, titled: "Send 2 files to home: /Existing <b>&amp;/Fresh")
        try display.screenshot(to: shots + "-4-fresh.png")
        try display.type("Send here", thenPress: "Return")

        let result = try shareTo.wait()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("queued 2 files for home:/Existing <b>&amp;/Fresh"), "\(result.stdout)")
        try session.waitForAll("completed", count: 2)
        let fresh = server.tree() + "/Existing <b>&amp;/Fresh"
        #expect(try String(contentsOfFile: fresh + "/first photo.jpg", encoding: .utf8) == "first")
        #expect(try String(contentsOfFile: fresh + "/second.txt", encoding: .utf8) == "second")
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
