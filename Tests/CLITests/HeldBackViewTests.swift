@testable import CLI
import Queue
import Testing
import Watcher

@Suite("Files a watch rule holds back, as people see them")
struct HeldBackViewTests {
    static let now: Int64 = 1_800_000_000_000

    /// 23 files held back by `camera`, the first `shown` of them stored.
    static func held(shown: Int = 1) -> [(rule: String, held: HeldBack)] {
        var held = HeldBack()
        held.count = 23
        held.files = (0..<shown).map { i in
            HeldBackFile(code: "open_for_writing", path: "/home/me/Camera/IMG_00\(42 + i).jpg",
                         message: "a program still has it open for writing (a copy or an import that has not finished?)",
                         since: now - 120_000, until: now + 480_000)
        }
        return [("camera", held)]
    }

    @Test("status: one line per file after the rule's name, with for how long, why and what becomes of it; then how many more")
    func statusLines() {
        let lines = WatchListView.heldBackStatusLines(Self.held(), now: Self.now)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.hasPrefix("camera: /home/me/Camera/IMG_0042.jpg waits (for 2 min): a program still has it open for writing "
                                       + "(a copy or an import that has not finished?); it is taken once it is closed, or as it is at ") == true,
                "\(lines)")
        #expect(lines.first?.hasSuffix(" (in 8 min) if it stays unchanged until then") == true, "\(lines)")
        #expect(lines.last == "camera: and 22 more files held back (`instant-upload watch list` shows them)")
    }

    @Test("status shows the first three files of a rule, watch list the twenty it keeps, each then how many more")
    func howManyShown() {
        let status = WatchListView.heldBackStatusLines(Self.held(shown: 20), now: Self.now)
        #expect(status.count == 4 && status.last == "camera: and 20 more files held back (`instant-upload watch list` shows them)", "\(status)")
        let list = WatchListView.heldBackLines(Self.held(shown: 20)[0].held, now: Self.now)
        #expect(list.count == 41 && list.last == "  waiting: and 3 more files held back", "\(list)")
    }

    @Test("the status icon shows waiting, not done, while a file is held back, and its tooltip says which")
    func trayWaits() {
        var facts = TrayView.Facts(summary: makeSummary(uploads: [.completed: 3]), batch: makeBatch(files: (3, 3)), agentRunning: true,
                                   watch: WatchCommands.Standing(heldBack: Self.held()), rules: [], recent: [], failed: [])
        #expect(TrayView.mood(facts) == .waiting)
        #expect(TrayView.picture(facts).body.contains("watch camera: /home/me/Camera/IMG_0042.jpg waits (for "))
        facts.watch.heldBack = []
        #expect(TrayView.mood(facts) == .done)
    }
}
