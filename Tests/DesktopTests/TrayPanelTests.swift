import Foundation
import Glibc
import Platform
import Testing
import TestSupport

/// The status icon in a real panel: xfce4-panel's tray under Xvfb, on a bus of the test's
/// own, showing the installed icons while an upload runs. The screenshots are left in
/// `.build/test-artifacts/` for people to look at.
@Suite("The status icon in xfce4-panel", .serialized)
struct TrayPanelTests {
    @Test("xfce4-panel shows the uploading icon while an upload runs, and opens its menu; screenshots of both")
    func shownByXfcePanel() throws {
        let server = try ReferenceServer()
        try server.makeFolder("Trip")
        let s = try AgentHarness()
        try s.writeConfig("[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 1\n")
        try s.addAccount(server)
        // The icons as `make install` puts them, where the tray looks for them.
        let share = s.home.path + "/share"
        try FileManager.default.createDirectory(atPath: share + "/icons", withIntermediateDirectories: true)
        try Shell.run("/bin/cp", ["-R", Repository.root + "/packaging/icons/hicolor", share + "/icons/"])

        // An upload that stays under way: the server stops reading after the first megabyte.
        try server.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 1_000_000])
        let video = try s.home.randomFile("trip/v.mp4", size: 3_000_000, seed: 3)
        #expect(try s.cli(["upload", "--to", "/Trip", video]).status == 0)
        try s.startAgent()
        defer { s.killAgent() }
        try s.waitFor("the upload under way") { $0.first?["state"] as? String == "in_progress" }

        let display = try VirtualDisplay()
        let bus = try SessionBusDaemon()
        defer { bus.stop() }
        let panel = try XfcePanel(display: display, bus: bus)
        defer { panel.stop() }
        let log = s.home.path + "/tray.log"
        let tray = try s.spawn(["tray"], environment: bus.environment.merging(["XDG_DATA_DIRS": share, "XDG_DATA_HOME": share]) { $1 },
                               output: .file(log), error: .file(log))
        defer { kill9(tray) }
        let icons = try panel.waitForTrayIcons(count: 1)
        #expect(icons.count == 1)
        try waitUntil("the tray says it is shown") {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("shown by the panel")
        }
        // The icon is drawn, not an empty square: its pixels are not all the panel's colour.
        let shot = Repository.artifacts + "/tray-uploading.png"
        try panel.screenshot(to: shot)
        let colours = try Shell.run("/usr/bin/convert", [shot, "-crop", icons[0].geometry, "+repage", "-unique-colors", "txt:-"])
        #expect(colours.split(separator: "\n").count > 8, "the icon shows in the panel: \(colours.prefix(400))")

        let menu = try panel.openMenu(ofIcon: 0)
        try panel.screenshotWithMenu(menu.area, to: Repository.artifacts + "/tray-menu.png")
        #expect(menu.area.height > 100, "a menu with the status line and its commands: \(menu.area)")
        try panel.closeMenus()
        #expect(tray.isRunning, "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }
}
