import FoundationEssentials
import Glibc
import Platform
import Queue

/// `queue --follow`: on a terminal, a live view redrawn in place that fits the screen; into a
/// pipe or a file, one line per change (with `--json`, one JSON object per change). Ends on
/// Ctrl-C, SIGTERM, or `q` on the terminal, with exit status 0 and the terminal as it was.
struct QueueFollower {
    let store: QueueStore
    let state: TransferState?
    let json: Bool
    let context: CommandContext

    /// Frames per second on a terminal; lines are checked once a second otherwise.
    static let frameInterval = 0.5
    static let changeInterval = 1.0

    func run() throws -> Int32 {
        if !json, let terminal = LiveTerminal() {
            // Resizes redraw; a suspend (Ctrl-Z) first gives the screen back.
            return try live(terminal, signals: SignalPipe.install([SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP, SIGCONT]))
        }
        return try changes(signals: SignalPipe.install([SIGINT, SIGTERM, SIGHUP]))
    }

    // MARK: On a terminal

    func live(_ terminal: LiveTerminal, signals: Int32) throws -> Int32 {
        terminal.enter()
        defer { terminal.leave() }
        var painter = FramePainter()
        var meters = Meters()
        var size = terminal.size
        while true {
            var redraw = ""
            for signal in SignalPipe.drain() {
                switch signal {
                case SIGINT, SIGTERM, SIGHUP: return ExitStatus.ok
                case SIGTSTP:
                    // Give the shell its screen back while stopped; draw afresh on return.
                    terminal.leave()
                    Glibc.signal(SIGTSTP, SIG_DFL)
                    raise(SIGTSTP)
                    SignalPipe.handle(SIGTSTP)
                    terminal.enter()
                    redraw = painter.clear()
                default:
                    break
                }
            }
            let now = terminal.size
            if now != size {
                size = now
                redraw = painter.clear()
            }
            let frame = try self.frame(rows: size.rows, columns: size.columns, meters: &meters)
            terminal.write(redraw + painter.paint(frame))
            let keys = terminal.wait(seconds: Self.frameInterval, signalFD: signals)
            if keys.contains(UInt8(ascii: "q")) { return ExitStatus.ok }
        }
    }

    /// Speeds per row, and of the whole batch for the status line.
    struct Meters {
        var rows = RateMeter()
        var batch = RateMeter()
    }

    /// The screen: the status line over as many rows as fit.
    func frame(rows: Int, columns: Int, meters: inout Meters) throws -> [String] {
        try store.database.snapshot { try frameOfOneMoment(rows: rows, columns: columns, meters: &meters) }
    }

    private func frameOfOneMoment(rows: Int, columns: Int, meters: inout Meters) throws -> [String] {
        let summary = try store.summary()
        let running = context.agentRunning
        var groups: [QueueView.Group] = []
        for s in LiveQueueFrame.priority where state == nil || state == s {
            let total = summary.count(s)
            guard total > 0 else { continue }
            // More rows than the screen can hold are never needed.
            groups.append(QueueView.Group(state: s, rows: try store.transfers(state: s, limit: rows), total: total))
        }
        let moving = groups.first { $0.state == .inProgress }?.rows ?? []
        let clock = MonotonicClock.seconds()
        let speeds = meters.rows.update(Dictionary(uniqueKeysWithValues: moving.map { ($0.id, $0.bytesDone) }), at: clock)
        var batch = try BatchReader.read(store, summary: summary, agentRunning: running)
        // Until the agent reports its own rate, the batch's bytes over the last seconds give one.
        let batchRate = meters.batch.update([0: batch.bytesDone], at: clock)[0]
        if batch.rate == nil, batch.uploading + batch.downloading > 0 { batch.rate = batchRate }
        let header = StatusLine.render(batch, pausedReason: summary.pausedReason, agentRunning: running)
        let view = QueueView(groups: groups, now: nowMilliseconds(), width: columns, speeds: speeds, rowsPerGroup: nil)
        return LiveQueueFrame(header: header, view: view, height: rows, width: columns).lines()
    }

    // MARK: Into a pipe or a file

    func changes(signals: Int32) throws -> Int32 {
        let since = nowMilliseconds()
        var before = try snapshot(completedSince: since)
        if !json {
            let running = context.agentRunning
            let line = try store.database.snapshot {
                let summary = try store.summary()
                return StatusLine.render(try BatchReader.read(store, summary: summary, agentRunning: running),
                                         pausedReason: summary.pausedReason, agentRunning: running)
            }
            context.say(line)
        }
        while true {
            var fds = [pollfd(fd: signals, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 1, Int32(saturating: Self.changeInterval * 1000))
            if SignalPipe.drain().contains(where: { [SIGINT, SIGTERM, SIGHUP].contains($0) }) { return ExitStatus.ok }
            let after = try snapshot(completedSince: since)
            let (changed, gone) = QueueChanges.changed(from: before, to: after)
            let now = nowMilliseconds()
            var out = ""
            for id in changed {
                guard let row = try store.transfer(id: id) else { continue }
                out += (json ? JSONOutput.line(TransferJSON(row)) : QueueChanges.line(row, now: now)) + "\n"
            }
            for id in gone {
                out += (json ? "{\"id\":\(id),\"removed\":true}" : QueueChanges.goneLine(id, now: now)) + "\n"
            }
            if !out.isEmpty { context.output(out) }
            before = after
        }
    }

    /// Every row that is not completed, and the ones completed since the view started: what
    /// a change can happen to. One light query, whatever the queue holds.
    func snapshot(completedSince: Int64) throws -> [Int64: QueueChanges.Entry] {
        var entries: [Int64: QueueChanges.Entry] = [:]
        var sql = """
            SELECT id, state, reason_code, reason_message, bytes_done, bytes_total FROM transfers
            WHERE (state != \(TransferState.completed.sql) OR completed_at >= ?)
            """
        var arguments: [SQLValue] = [.int(completedSince)]
        if let state {
            sql += " AND state = ?"
            arguments.append(.text(state.rawValue))
        }
        try store.database.query(sql, arguments) { r in
            entries[r.int64(0)] = QueueChanges.Entry(state: TransferState(rawValue: r.text(1)) ?? .failed, reasonCode: r.optionalText(2),
                                                     reasonMessage: r.optionalText(3), bytesDone: r.int64(4), bytesTotal: r.int64(5))
        }
        return entries
    }
}
