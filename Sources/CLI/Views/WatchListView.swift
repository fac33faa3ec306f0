import Platform
import Queue
import Watcher

/// `watch list` for people: per rule, where from and where to, what it does, how it
/// stands, what holds its uploads, and what is wrong with what to do about it.
enum WatchListView {
    static func render(_ items: [WatchListItem], now: Int64) -> String {
        guard !items.isEmpty else {
            return "no folder is watched; add one with `instant-upload watch add DIR --to REMOTE_DIR`"
        }
        return items.map { render($0, now: now) }.joined(separator: "\n\n")
    }

    static func render(_ item: WatchListItem, now: Int64) -> String {
        let rule = item.rule
        let account = item.account?.name ?? rule.account ?? "?"
        var lines = ["\(rule.id): \(rule.folder.display) -> \(account):\(RemotePathPlanner.example(for: rule))"]

        var settings = [WatchCommands.describe(rule.media)]
        settings.append(rule.existing ? "files already there uploaded too" : "files already there left alone")
        if item.wifiOnly { settings.append("Wi-Fi only" + (item.wifiOnlyFrom == "account" ? " (as the account says)" : "")) }
        if rule.onACPower { settings.append("only on mains power") }
        settings.append(rule.afterUpload == .trash ? "originals to the trash once uploaded" : "originals kept")
        lines.append("  " + settings.joined(separator: "; "))

        var standing = [stateText(item)]
        let overview = item.overview
        var taken = "\(DisplayText.grouped(overview.taken)) taken"
        if let last = overview.lastTaken {
            taken += ", last \(last.lastComponent.display)"
            if let at = overview.lastTakenAt { taken += " (\(HumanFormat.relative(at, now: now)))" }
        }
        standing.append(taken)
        if overview.pending > 0 { standing.append("\(DisplayText.grouped(overview.pending)) to upload") }
        if overview.failed > 0 { standing.append("\(overview.failed) failed (`instant-upload queue --state failed`)") }
        lines.append("  " + standing.joined(separator: "; "))

        for held in overview.held {
            lines.append("  held: \(held.reason.message) (\(held.count) upload\(held.count == 1 ? "" : "s"))")
        }
        lines += heldBackLines(item.heldBack, now: now)
        if overview.keptCount > 0 {
            lines.append("  kept, not moved to the trash: \(DisplayText.grouped(overview.keptCount)) original\(overview.keptCount == 1 ? "" : "s")")
            for kept in overview.kept { lines.append("    \(kept.path.display): \(kept.reason)") }
            if overview.keptCount > overview.kept.count { lines.append("    and \(overview.keptCount - overview.kept.count) more") }
        }
        for trouble in item.troubles {
            lines.append("  trouble: \(trouble.message)")
            lines.append("    \(trouble.action)")
        }
        return lines.joined(separator: "\n")
    }

    /// The files held back: which, for how long, why, and what becomes of each.
    static func heldBackLines(_ held: HeldBack, now: Int64) -> [String] {
        var lines: [String] = []
        for file in held.files {
            lines.append("  waiting: \(file.path) (for \(waited(file, now: now))): \(file.message)")
            lines.append("    \(file.outcome(at: HumanFormat.moment(file.until, now: now)))")
        }
        if let more = more(held) { lines.append("  waiting: " + more) }
        return lines
    }

    /// The same for `status` and the status icon, one line each after the rule's name, the
    /// first few of each rule (`StatusLine.namedPerKind`): a glance, not the list.
    static func heldBackStatusLines(_ rules: [(rule: String, held: HeldBack)], now: Int64) -> [String] {
        rules.flatMap { rule, held in
            held.files.prefix(StatusLine.namedPerKind).map { file in
                "\(rule): \(file.path) waits (for \(waited(file, now: now))): \(file.message); \(file.outcome(at: HumanFormat.moment(file.until, now: now)))"
            } + (more(held, shown: min(StatusLine.namedPerKind, held.files.count)).map { ["\(rule): \($0) (`instant-upload watch list` shows them)"] } ?? [])
        }
    }

    private static func waited(_ file: HeldBackFile, now: Int64) -> String { HumanFormat.duration(milliseconds: max(0, now - file.since)) }

    private static func more(_ held: HeldBack, shown: Int? = nil) -> String? {
        let rest = held.count - (shown ?? held.files.count)
        return rest > 0 ? "and \(DisplayText.grouped(rest)) more \(rest == 1 ? "file" : "files") held back" : nil
    }

    private static func stateText(_ item: WatchListItem) -> String {
        switch item.state {
        case "watching":
            let folders = item.overview.status?.watchedFolders ?? 0
            return "watching (\(folders) folder\(folders == 1 ? "" : "s"))"
        case "scanning_periodically": return "scanning every few minutes (out of inotify watches)"
        case "folder_missing": return "waiting for its folder to appear"
        case "paused": return "paused (`instant-upload watch resume \(item.rule.id)` goes on)"
        case "not_watching": return "not watching"
        case "starting": return "starting"
        case "agent_not_running": return "not watching (the agent is not running)"
        default: return item.state.replacing("_", with: " ")
        }
    }
}
