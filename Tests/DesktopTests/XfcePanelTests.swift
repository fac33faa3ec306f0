import Foundation
import Platform
import Testing
import TestSupport

/// The panel that tray tests show their icon in (see `XfcePanel`): it starts on a display and
/// a bus of the test's own, hosts StatusNotifierItems, and goes away entirely when stopped.
@Suite("xfce4-panel as a host for tray icons", .serialized)
struct XfcePanelTests {
    @Test("the panel starts with an empty tray that owns the StatusNotifierWatcher, and stops without leftovers")
    func startAndStop() throws {
        let display = try VirtualDisplay()
        let bus = try SessionBusDaemon()
        let panel = try XfcePanel(display: display, bus: bus)
        #expect(try XfcePanel.nameHasOwner("org.kde.StatusNotifierWatcher", environment: bus.environment))
        #expect(panel.panelArea.y == 0 && panel.panelArea.height >= XfcePanel.size, "\(panel.panelArea)")
        let tray = try panel.trayArea()
        #expect(try panel.trayIcons().isEmpty, "tray \(tray)")
        try panel.screenshot(to: Repository.artifacts + "/xfce-panel-empty.png")
        #expect(FileManager.default.fileExists(atPath: Repository.artifacts + "/xfce-panel-empty.png"))

        panel.stop()
        try Poll.until("the tray and xfconfd leave the bus", seconds: 10) {
            let watcher = try XfcePanel.nameHasOwner("org.kde.StatusNotifierWatcher", environment: bus.environment)
            let xfconf = try XfcePanel.nameHasOwner("org.xfce.Xfconf", environment: bus.environment)
            return !watcher && !xfconf
        }
        #expect(display.windows(named: "^xfce4-panel$").isEmpty)
    }
}
