import Desktop
import Engine
import Glibc
import Platform
import Queue
import Transport

/// The seeds' uploads view as commands: status, queue, show, retry, cancel, clear.
public enum QueueCommands {
    /// `status`: one line on the batch. Exits 1 when an item failed, or when work waits and
    /// no agent runs to do it.
    public static func status(json: Bool, context: CommandContext) throws -> Int32 {
        let store = try context.openStore()
        let pid = context.agentPID
        let (summary, batch) = try store.database.snapshot { () throws -> (QueueSummary, BatchFigures) in
            var summary = try store.summary()
            if pid != nil { hearAgent(&summary, context) }
            return (summary, try BatchReader.read(store, summary: summary, agentRunning: pid != nil))
        }
        let watch = pid != nil ? try WatchCommands.standing(store: store, context: context) : WatchCommands.Standing()
        if json {
            context.say(JSONOutput.encode(StatusJSON(summary: summary, batch: batch, agentPID: pid, watchTroubles: watch.troubles,
                                                     watchWaiting: watch.heldBack)))
        } else {
            context.say(StatusLine.render(batch, pausedReason: summary.pausedReason, agentRunning: pid != nil,
                                          watch: watch.statusLines(now: nowMilliseconds())))
        }
        return watch.troubles.isEmpty ? exitStatus(summary, agentRunning: pid != nil) : ExitStatus.attention
    }

    /// 1 when something needs the person: a failed item, or work that waits for an agent
    /// (what the person paused waits for the person).
    static func exitStatus(_ summary: QueueSummary, agentRunning: Bool) -> Int32 {
        summary.needAttention > 0 || (summary.waitingForAgent > 0 && !agentRunning) ? ExitStatus.attention : ExitStatus.ok
    }

    /// What holds the whole queue, in the running agent's words: a full disk cannot be
    /// written to the database for the CLI to read. The person's own pause holds from the
    /// moment it is written, before the agent has looked.
    static func hearAgent(_ summary: inout QueueSummary, _ context: CommandContext) {
        guard let live = livePause(context) else { return }
        let yours = summary.pausedReason == ReasonCode.paused.rawValue ? summary.pausedReason : nil
        summary.pausedReason = live?.rawValue ?? yours
    }

    /// `queue`: each group with its count, long ones summarised; `--state` shows one in full.
    public static func queue(state: TransferState?, json: Bool, follow: Bool, context: CommandContext) throws -> Int32 {
        let store = try context.openStore()
        if follow { return try QueueFollower(store: store, state: state, json: json, context: context).run() }
        let running = context.agentRunning
        // Read at one moment: a long text goes out while it is read only as fast as the
        // reader takes it, and the rest after, so a pager reading slowly never holds the
        // queue's log.
        let eager = context.eagerOutput()
        let (text, summary) = try store.database.snapshot { () throws -> (String, QueueSummary) in
            var summary = try store.summary()
            if running { hearAgent(&summary, context) }
            if json {
                var text = JSONOutput.ArrayText()
                try store.eachTransfer(state: state) {
                    text.add(TransferJSON($0))
                    text.handOn(to: eager)
                }
                return (text.finish(), summary)
            }
            let batch = try BatchReader.read(store, summary: summary, agentRunning: running)
            let header = StatusLine.render(batch, pausedReason: summary.pausedReason, agentRunning: running)
            return (try render(store: store, summary: summary, header: header, state: state, width: terminalWidth(), eager: eager), summary)
        }
        eager?.finish()
        context.say(text)
        return exitStatus(summary, agentRunning: running)
    }

    static let rowsPerGroup = 10

    /// The text of the queue view, reading only the rows it shows plus counts; one state in
    /// full is written as its rows are read, its start handed to `eager` as it goes, and
    /// the rest returned.
    static func render(store: QueueStore, summary: QueueSummary, header: String, state: TransferState?, width: Int,
                       eager: EagerOutput? = nil) throws -> String {
        let now = nowMilliseconds()
        if let state {
            let total = summary.count(state)
            guard total > 0 else { return "nothing " + QueueView.emptyWord(state) }
            let view = QueueView(groups: [], now: now, width: width, rowsPerGroup: nil)
            var group = QueueView.GroupText(view, state: state, total: total,
                                            idWidth: QueueView.idWidth(largestID: try store.largestID(state: state)))
            eager?.write(header + "\n\n")
            try store.eachTransfer(state: state) {
                group.add($0)
                group.handOn(to: eager)
            }
            return (eager == nil ? header + "\n\n" : "") + group.finish()
        }
        var groups: [QueueView.Group] = []
        for s in TransferState.allCases where summary.count(s) > 0 {
            groups.append(QueueView.Group(state: s, rows: try store.transfers(state: s, limit: rowsPerGroup), total: summary.count(s)))
        }
        guard !groups.isEmpty else { return "nothing queued" }
        return header + "\n\n" + QueueView(groups: groups, now: now, width: width, rowsPerGroup: rowsPerGroup).render()
    }

    static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        if let columns = ProcessEnvironment.current["COLUMNS"].flatMap(Int.init), columns > 20 { return columns }
        return 80
    }

    public static func show(id: Int64, json: Bool, context: CommandContext) throws -> Int32 {
        guard let row = try context.openStore().transfer(id: id) else {
            context.complain("there is no transfer #\(id); see `instant-upload queue`")
            return ExitStatus.attention
        }
        context.say(json ? JSONOutput.encode(TransferJSON(row)) : TransferDetail.render(row, now: nowMilliseconds(), width: terminalWidth()))
        return ExitStatus.ok
    }

    /// `retry`: failed (or waiting) items go back in the queue once their cause is checked.
    /// Exits 0 when every item named will be sent: queued again, already queued or moving;
    /// 1 when one cannot be: unknown, already completed, or its cause is still there.
    public static func retry(ids: [Int64], allFailed: Bool, to folder: String?, now: Bool, context: CommandContext) throws -> Int32 {
        let store = try context.openStore()
        let wanted = allFailed ? try store.failedIDs() : ids
        if allFailed && wanted.isEmpty {
            context.say("nothing has failed")
            return ExitStatus.ok
        }
        var status = ExitStatus.ok
        var movable: [Int64] = []
        for id in wanted {
            guard let row = try store.transfer(id: id) else {
                context.complain("there is no transfer #\(id)")
                status = ExitStatus.attention
                continue
            }
            // What is to go now, a failed or waiting item (or one a rule holds, sent by hand),
            // goes only once its cause is gone: a held one whose card is out would only wait again.
            if [.failed, .retrying].contains(row.state) || (row.state == .queued && now),
               let check = try RetryCheck.problem(for: row, newFolder: folder, store: store, context: context) {
                context.complain("#\(id) \(row.name): \(check)")
                status = ExitStatus.attention
                continue
            }
            switch row.state {
            case .failed, .retrying:
                movable.append(id)
            case .completed:
                context.complain("#\(id) \(row.name) is already completed, so there is nothing to retry; upload it again with `instant-upload upload`")
                status = ExitStatus.attention
            case .inProgress: context.say("#\(id) \(row.name): already moving")
            case .queued where now:
                // Held by a rule (Wi-Fi only): send this one regardless.
                try store.setIgnoreRules([id])
                context.say("#\(id) \(row.name): goes now, whatever the rules")
                context.wakeOrStartAgent()
            case .queued: context.say("#\(id) \(row.name): already queued")
            }
        }
        let moved = try store.retry(movable, newRemoteFolder: folder.map(RemotePath.normalize), ignoreRules: now)
        if !moved.isEmpty {
            context.say("queued again: \(idWords(moved))" + (folder.map { " into \($0)" } ?? ""))
            context.wakeOrStartAgent()
        }
        return status
    }

    /// `cancel`: stops items and takes them out of the queue. Exits 1 for an unknown or
    /// completed item; the others are still cancelled.
    public static func cancel(ids: [Int64], context: CommandContext) throws -> Int32 {
        let store = try context.openStore()
        var status = ExitStatus.ok
        var asked: [Int64] = []
        for id in ids {
            guard let row = try store.transfer(id: id) else {
                context.complain("there is no transfer #\(id)")
                status = ExitStatus.attention
                continue
            }
            if row.state == .completed {
                context.complain("#\(id) \(row.name) is already completed; `instant-upload clear completed` removes it from the list")
                status = ExitStatus.attention
                continue
            }
            asked.append(id)
        }
        guard !asked.isEmpty else { return status }
        try store.requestCancel(asked)
        if context.wakeAgent() {
            // The agent stops running transfers, ends uploads on the server, and removes the rows.
            let deadline = MonotonicClock.seconds() + 5
            while MonotonicClock.seconds() < deadline, try asked.contains(where: { try store.transfer(id: $0) != nil }) { usleep(50_000) }
            let left = try asked.filter { try store.transfer(id: $0) != nil }
            if left.isEmpty { context.say("cancelled \(idWords(asked))") }
            else { context.say("cancelling \(idWords(left)); the agent is finishing it") }
        } else {
            // No agent: nothing is running, so the rows and their partial downloads can go
            // now; server uploads expire by themselves.
            for id in asked {
                guard let row = try store.transfer(id: id) else { continue }
                CancelJob.removeLocalLeftovers(of: row)
                try store.remove(id, by: .cancel)
            }
            context.say("cancelled \(idWords(asked))")
        }
        return status
    }

    /// `#3, #4, #5`.
    static func idWords(_ ids: [Int64]) -> String { ids.map { "#\($0)" }.joined(separator: ", ") }

    public static func clear(_ scope: QueueStore.ClearScope, context: CommandContext) throws -> Int32 {
        let n = try context.openStore().clear(scope)
        let what = scope == .all ? "completed and failed" : scope.rawValue
        context.say(n == 0 ? "nothing \(what) to clear" : "cleared \(n) \(what) transfer\(n == 1 ? "" : "s")")
        return ExitStatus.ok
    }

    /// The running agent's own word on what pauses the queue: a full disk cannot be
    /// written to the database for `status` to read. Nil when the agent does not say.
    /// `.some(nil)` means "running, nothing paused".
    static func livePause(_ context: CommandContext) -> ReasonCode?? {
        guard let answer = ControlSocketClient.send("pause", to: context.paths.controlSocket) else { return nil }
        if answer == "running" { return .some(nil) }
        guard answer.hasPrefix("paused "), let code = ReasonCode(rawValue: String(answer.dropFirst("paused ".count))) else { return nil }
        return .some(code)
    }
}

/// Before a failed item goes back in the queue, check whether its cause is gone, as the
/// seeds ask: a quota failure checks the space left, a missing folder checks the folder,
/// a missing file checks the file. What it found is said either way.
enum RetryCheck {
    /// Throws only when the check cannot even be set up (a CA file that cannot be used).
    static func problem(for row: Transfer, newFolder: String?, store: QueueStore, context: CommandContext) throws -> String? {
        if row.direction == .upload {
            if case .failure(let refusal) = Intake.check(row.localPath) {
                // Its folder away (a card out): say that rather than "no such file".
                if let reason = row.reason, reason.code == .folderMissing { return "cannot retry now: \(reason.message)" }
                return "cannot retry: \(refusal.problem)"
            }
        }
        guard row.direction == .upload, let code = row.reason?.code, code == .quota || code == .targetMissing else { return nil }
        guard let account = try? store.account(id: row.accountID) else { return nil }
        let settings = try context.transferSettings(for: account)
        // Never asked without the password: when it cannot be read now, the agent checks.
        guard let password = SecretStore(paths: context.paths).password(for: account.name) else { return nil }
        let dav = WebDAVClient(root: account.webdavURL, credentials: Credentials(username: account.username, password: password))
        settings.prepare(dav.session, for: account)
        dav.session.stallSeconds = 10
        let folder = newFolder.map(RemotePath.normalize) ?? row.remoteFolder
        do {
            switch code {
            case .targetMissing:
                if try !dav.exists(folder) {
                    return "the folder \(folder) still does not exist on \(account.name); choose another with `instant-upload retry \(row.id) --to DIR`"
                }
            case .quota:
                let needed = row.bytesTotal - row.checkpoint.offset
                if let available = try dav.quota(of: folder)?.availableBytes, available < needed {
                    return "still not enough space on \(account.name): \(HumanFormat.bytes(available)) free, the file needs \(HumanFormat.bytes(needed)); free some space first"
                }
            default:
                break
            }
        } catch {
            // Can't check from here: let the agent try; it will say what it finds.
            return nil
        }
        return nil
    }
}
