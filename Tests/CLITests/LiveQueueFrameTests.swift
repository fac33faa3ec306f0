@testable import CLI
import Foundation
import Platform
import Queue
import Testing

@Suite("queue --follow on a terminal")
struct LiveQueueFrameTests {
    /// A busy queue: 3 moving, 2 failed, 1 retrying, 264 waiting, 35 done.
    func busyView(width: Int) -> QueueView {
        let moving = (1...3).map { makeTransfer(id: Int64($0), state: .inProgress, bytesDone: 500_000 * Int64($0), bytesTotal: 2_000_000) }
        let failed = (4...5).map { makeTransfer(id: Int64($0), state: .failed, reason: Reason(.quota)) }
        let retrying = [makeTransfer(id: 6, state: .retrying, reason: Reason(.serverBusy), attempts: 2, nextAttemptAt: fixedNow + 5_000)]
        let queued = (7...270).map { makeTransfer(id: Int64($0)) }
        let done = (271...305).map { makeTransfer(id: Int64($0), state: .completed, completedAt: fixedNow) }
        return QueueView(groups: [
            .init(state: .queued, rows: Array(queued.prefix(60)), total: queued.count),
            .init(state: .completed, rows: Array(done.prefix(60)), total: done.count),
            .init(state: .inProgress, rows: moving),
            .init(state: .failed, rows: failed),
            .init(state: .retrying, rows: retrying),
        ], now: fixedNow, width: width, speeds: [1: 1_000_000], rowsPerGroup: nil, timeZone: utc)
    }

    let header = "3 uploading, 264 waiting, 1 retrying (server busy), 2 failed; 35 of 305 files"

    @Test("a 24-line terminal gets at most 24 lines, none wider than the screen, whatever its width")
    func neverOverruns() {
        for (rows, columns) in [(24, 80), (24, 40), (10, 30), (5, 100), (3, 20), (1, 80), (60, 200)] {
            let lines = LiveQueueFrame(header: header, view: busyView(width: columns), height: rows, width: columns).lines()
            #expect(lines.count <= rows, "\(rows)x\(columns): \(lines.count) lines")
            for line in lines { #expect(TextLayout.cells(line) <= columns, "\(rows)x\(columns): \(line)") }
            #expect(lines.first.map { header.hasPrefix($0.replacingOccurrences(of: "…", with: "")) } == true, "the status line stays on top")
        }
    }

    @Test("moving and failed rows come first, then the rest as `… and N more waiting`")
    func priorities() {
        let lines = LiveQueueFrame(header: header, view: busyView(width: 80), height: 24, width: 80).lines()
        #expect(lines.count == 24)
        let titles = lines.filter { !$0.hasPrefix(" ") && $0.contains(" (") && !$0.contains(";") }
        #expect(titles == ["In progress (3)", "Failed (2)", "Retrying (1)", "Queued (264)", "Completed (35)"])
        for id in 1...6 { #expect(lines.contains { $0.hasPrefix("  #\(id) ") }, "#\(id) is on screen") }
        #expect(lines.contains { $0.hasPrefix("  … and ") && $0.hasSuffix(" more waiting") }, "\(lines)")
        #expect(lines.contains("     [######################--------]  75%  1.5 MB of 2.0 MB"))
        #expect(lines.contains { $0.contains("1.0 MB/s, 2 s left") })
    }

    @Test("a tall terminal shows more of the waiting rows; the hidden count shrinks to match")
    func tallerShowsMore() throws {
        func waitingShown(_ rows: Int) -> (shown: Int, hidden: Int) {
            let lines = LiveQueueFrame(header: header, view: busyView(width: 80), height: rows, width: 80).lines()
            let shown = lines.filter { $0.contains("waiting its turn") }.count
            let more = lines.first { $0.hasSuffix(" more waiting") } ?? ""
            return (shown, Int(more.split(separator: " ").dropFirst(2).first ?? "") ?? 0)
        }
        let short = waitingShown(30), tall = waitingShown(60)
        #expect(tall.shown > short.shown)
        #expect(short.shown + short.hidden == 264)
        #expect(tall.shown + tall.hidden == 264)
    }

    @Test("wide characters count two cells, so a Japanese name is cut before it wraps")
    func wideNames() {
        let name = String(repeating: "写真", count: 30) + ".jpg"
        let row = makeTransfer(id: 1, local: LocalPath("/p/" + name), remote: "/Photos/" + name)
        let view = QueueView(groups: [.init(state: .queued, rows: [row])], now: fixedNow, width: 40, rowsPerGroup: nil)
        for line in LiveQueueFrame(header: "1 waiting", view: view, height: 10, width: 40).lines() {
            #expect(TextLayout.cells(line) <= 40, "\(line)")
        }
        #expect(TextLayout.cells("写真.jpg") == 8)
        #expect(TextLayout.clip("写真写真", cells: 5) == "写真…")
    }

    @Test("after a row shrinks, repainting leaves no stale text on the screen")
    func noLeftovers() {
        var painter = FramePainter()
        var screen = VirtualScreen(rows: 6, columns: 60)
        screen.apply(painter.paint(["3 uploading", "  #17 IMG_17.jpg", "      connection reset by peer while sending chunk 9"]))
        screen.apply(painter.paint(["3 uploading", "  #17 IMG_17.jpg", "      0 B/s"]))
        #expect(screen.lines == ["3 uploading", "  #17 IMG_17.jpg", "      0 B/s", "", "", ""])
        // A frame with fewer lines clears the rows below it.
        screen.apply(painter.paint(["nothing queued"]))
        #expect(screen.lines == ["nothing queued", "", "", "", "", ""])
    }

    @Test("an unchanged line is not written again; a full-width line keeps its last cell")
    func minimalAndFullWidth() {
        var painter = FramePainter()
        var screen = VirtualScreen(rows: 2, columns: 10)
        screen.apply(painter.paint(["0123456789", "a"]))
        let second = painter.paint(["0123456789", "b"])
        #expect(!second.contains("0123456789"))
        screen.apply(second)
        #expect(screen.lines == ["0123456789", "b"])
        screen.apply(painter.clear())
        #expect(screen.lines == ["", ""])
        screen.apply(painter.paint(["0123456789", "b"]))
        #expect(screen.lines == ["0123456789", "b"], "after a clear everything is drawn again")
    }

    @Test("row speeds come from the last seconds of progress; a row that stopped reads 0")
    func rateMeter() {
        var meter = RateMeter(window: 5)
        #expect(meter.update([1: 0], at: 0).isEmpty, "one sample is no speed")
        #expect(meter.update([1: 500_000], at: 0.5).isEmpty, "half a second is too soon to say")
        #expect(meter.update([1: 1_000_000], at: 1)[1] == 1_000_000)
        var last: [Int64: Double] = [:]
        for t in stride(from: 1.5, through: 8, by: 0.5) { last = meter.update([1: 1_000_000], at: t) }
        #expect(last[1] == 0, "no progress for the whole window")
        #expect(meter.update([1: 0], at: 8.5).isEmpty, "a restart from zero starts over")
        #expect(meter.update([:], at: 9).isEmpty)
    }

    @Test("a status line wider than the screen breaks after its `;`, keeping the time left in sight")
    func headerBreaks() {
        let long = "3 uploading, 153 waiting; 144 of 300 files, 100 MB of 194 MB, 18 MB/s, about 6 s left"
        let lines = LiveQueueFrame(header: long, view: busyView(width: 80), height: 24, width: 80).lines()
        #expect(Array(lines.prefix(3)) == ["3 uploading, 153 waiting;", "144 of 300 files, 100 MB of 194 MB, 18 MB/s, about 6 s left", ""])
        let wide = LiveQueueFrame(header: long, view: busyView(width: 120), height: 24, width: 120).lines()
        #expect(wide[0] == long)
    }
}
