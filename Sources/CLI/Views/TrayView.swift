import Desktop
import Platform
import Queue
import Watcher

/// What the status icon shows, read from the queue the way `status` reads it: the mood, the
/// status line as its tooltip, and the menu.
struct TrayView {
    /// What the picture is made from; `read` gathers it, the rest is pure.
    struct Facts {
        var summary: QueueSummary
        var batch: BatchFigures
        var agentRunning: Bool
        /// What keeps watch rules from their job, and the files they hold back for now (a
        /// stalled import, a copy cut short).
        var watch = WatchCommands.Standing()
        var rules: [WatchRule]
        var recent: [Transfer]
        var failed: [Transfer]
    }

    static let recentFiles = 5
    static let failuresShown = 10

    static func read(_ store: QueueStore, context: CommandContext) throws -> Facts {
        try store.database.snapshot { try facts(store, context: context) }
    }

    private static func facts(_ store: QueueStore, context: CommandContext) throws -> Facts {
        var summary = try store.summary()
        let running = context.agentRunning
        if running { QueueCommands.hearAgent(&summary, context) }
        let batch = try BatchReader.read(store, summary: summary, agentRunning: running)
        let rules = (try? context.watchConfig().rules) ?? []
        let watch = running ? try WatchCommands.standing(of: rules, store: store) : WatchCommands.Standing()
        return Facts(summary: summary, batch: batch, agentRunning: running,
                     watch: watch,
                     rules: rules,
                     recent: try store.transfers(state: .completed, direction: .upload, limit: recentFiles),
                     failed: summary.count(.failed) > 0 ? try store.transfers(state: .failed, limit: failuresShown) : [])
    }

    static func picture(_ f: Facts) -> TrayPicture {
        let body = StatusLine.render(f.batch, pausedReason: f.summary.pausedReason, agentRunning: f.agentRunning,
                                     watch: f.watch.statusLines(now: nowMilliseconds()))
        return TrayPicture(mood: mood(f), title: "instant-upload", body: body, menu: menu(f, statusLines: body))
    }

    static func mood(_ f: Facts) -> TrayPicture.Mood {
        let s = f.summary
        if s.needAttention > 0 || !f.watch.troubles.isEmpty { return .attention }
        let held = s.pausedReason != nil || !f.agentRunning
        if !held && f.batch.uploading + f.batch.downloading > 0 { return .uploading }
        if s.count(.queued) + s.count(.inProgress) + s.count(.retrying) > 0 || s.pausedReason != nil || !f.watch.heldBack.isEmpty { return .waiting }
        return .done
    }

    static func menu(_ f: Facts, statusLines: String) -> [TrayMenuItem] {
        var items: [TrayMenuItem] = statusLines.split(separator: "\n").map { .text(String($0)) }
        if !f.recent.isEmpty {
            items.append(.separator)
            items.append(.text("Uploaded lately"))
            for row in f.recent {
                let label = "\(DisplayText.escape(row.remoteName))  (\(DisplayText.escape(row.remoteFolder)) on \(row.accountName))"
                items.append(TrayMenuItem(label, action: .openUploaded(account: row.accountName, remotePath: row.remotePath)))
            }
        }
        items.append(.separator)
        let s = f.summary
        if s.pausedReason == ReasonCode.paused.rawValue || s.pausedRows > 0 {
            items.append(TrayMenuItem("Resume all", action: .resumeAll))
        }
        if s.pausedReason != ReasonCode.paused.rawValue {
            items.append(TrayMenuItem("Pause all", action: .pauseAll))
        }
        let failed = s.count(.failed)
        if failed > 0 {
            var why: [TrayMenuItem] = [TrayMenuItem("Retry \(StatusLine.n(failed)) failed", action: .retryFailed), .separator]
            why += f.failed.map { .text("#\($0.id) \(DisplayText.escape($0.remoteName)): \($0.reason?.message ?? "failed")") }
            if failed > f.failed.count { why.append(.text("and \(StatusLine.n(failed - f.failed.count)) more: instant-upload queue --state failed")) }
            items.append(TrayMenuItem("Retry \(StatusLine.n(failed)) failed", action: .retryFailed))
            items.append(TrayMenuItem("Why \(failed == 1 ? "it" : "they") failed", children: why))
        }
        items.append(TrayMenuItem("Send files…", action: .sendFiles))
        items.append(TrayMenuItem("Show queue", action: .showQueue))
        if !f.rules.isEmpty {
            var rules: [TrayMenuItem] = []
            for rule in f.rules {
                let trouble = f.watch.troubles.first { $0.rule == rule.id }
                let state = rule.paused ? "paused" : trouble.map { "trouble: \($0.message)" } ?? "watching \(rule.folder.display)"
                rules.append(.text("\(rule.id): \(state)"))
                rules.append(rule.paused ? TrayMenuItem("Resume \(rule.id)", action: .resumeRule(rule.id))
                                         : TrayMenuItem("Pause \(rule.id)", action: .pauseRule(rule.id)))
            }
            items.append(TrayMenuItem("Watch rules", children: rules))
        }
        items.append(.separator)
        items.append(TrayMenuItem("Quit tray", action: .quit))
        return items
    }
}

