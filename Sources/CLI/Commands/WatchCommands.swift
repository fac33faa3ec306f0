import Engine
import Glibc
import Platform
import Queue
import Watcher

/// `watch add|list|remove|pause|resume`. Rules live in the config file, edited in place so
/// every other line and comment stays; what each rule took lives in the queue database.
/// A running agent hears the config change and applies it at once.
public enum WatchCommands {
    public struct AddRequest {
        public var folder: LocalPath
        public var remoteFolder: String
        public var account: String?
        public var name: String?
        public var media = MediaSelection.all
        public var existing = false
        public var subfolders = WatchRule.DateSubfolders.none
        public var afterUpload = WatchRule.AfterUpload.keep
        public var wifiOnly = false
        public var onACPower = false
        public var settleSeconds = WatchRule.defaultSettleSeconds

        public init(folder: LocalPath, remoteFolder: String) {
            self.folder = folder
            self.remoteFolder = remoteFolder
        }
    }

    public static func add(_ request: AddRequest, context: CommandContext) throws -> Int32 {
        if let problem = RemoteFolderName.problem(request.remoteFolder) {
            context.complain(problem)
            return ExitStatus.usage
        }
        guard (1...600).contains(request.settleSeconds) else {
            context.complain("--settle must be a number of seconds from 1 to 600")
            return ExitStatus.usage
        }
        let given = normalized(request.folder)
        // Stored and compared where it really is: the same folder reached through `..` or
        // a symbolic link is the same folder.
        let folder = WatchRule.realFolder(given)
        switch folderKind(folder) {
        case .notAFolder:
            context.complain("\(given.display) is not a folder; give the folder to watch")
            return ExitStatus.usage
        case .folder, .missing:
            break
        }
        let (text, rules) = try context.watchConfig()
        for other in rules {
            guard let overlap = WatchRule.overlap(of: folder, with: other.folder) else { continue }
            context.complain(refusal(given, other, overlap))
            return ExitStatus.attention
        }
        let id: String
        if let name = request.name {
            guard WatchRule.isValidID(name) else {
                context.complain("`\(DisplayText.escape(name))` is not a rule name; use letters, digits, `-`, `_` and `.`")
                return ExitStatus.usage
            }
            guard !rules.contains(where: { $0.id == name }) else {
                context.complain("there is a rule named \(name) already; choose another name with --name")
                return ExitStatus.attention
            }
            id = name
        } else {
            id = WatchRule.makeID(for: folder, avoiding: Set(rules.map(\.id)))
        }
        let store = try context.openStore()
        let (found, status) = try TransferCommands.account(request.account, store: store, context: context)
        guard let account = found else { return status }
        let rule = WatchRule(id: id, folder: folder, remoteFolder: RemotePath.normalize(request.remoteFolder), account: account.name,
                             media: request.media, wifiOnly: request.wifiOnly ? true : nil, existing: request.existing,
                             subfolders: request.subfolders, afterUpload: request.afterUpload, onACPower: request.onACPower,
                             settleSeconds: request.settleSeconds)

        // The memory first, then the config: the agent starts the rule as soon as the
        // config says so, and must find the baseline already there.
        try store.resetWatchMemory(rule: id, folder: folder)
        var baseline: WatchBaseline.Outcome?
        if !rule.existing { baseline = try WatchBaseline.take(rule: id, folder: folder, store: store) }
        do {
            try context.writeConfig(try rule.writing(into: text))
        } catch {
            try? store.removeWatchMemory(rule: id)
            throw error
        }

        context.say("watching \(folder.display) as rule \(id): new \(describe(rule.media)) go to \(account.name):\(RemotePathPlanner.example(for: rule))")
        switch baseline {
        case nil:
            context.say("what the folder holds now is uploaded too")
        case .files(let count):
            context.say(count == 0 ? "the folder is empty; everything that arrives from now on is uploaded"
                        : "\(DisplayText.grouped(count)) file\(count == 1 ? " already there is" : "s already there are") left alone (`--existing` uploads them)")
        case .folderMissing:
            context.say("the folder is not there now; it is watched from when it appears, and everything it holds then is uploaded (a card inserted later, say)")
        case .notTaken(let error):
            context.say("the folder cannot be looked at now (\(error.reason)); what it holds when the agent first can is left alone")
        }
        context.wakeOrStartAgent()
        return ExitStatus.ok
    }

    public static func list(json: Bool, context: CommandContext) throws -> Int32 {
        let (_, rules) = try context.watchConfig()
        let store = try context.openStore()
        let agentRunning = context.agentRunning
        let accounts = try store.accounts()
        var items: [WatchListItem] = []
        for rule in rules {
            let account = rule.account.flatMap { name in accounts.first { $0.name == name } } ?? (rule.account == nil && accounts.count == 1 ? accounts.first : nil)
            items.append(WatchListItem(rule: rule, account: account, overview: try store.watchOverview(rule: rule.id), agentRunning: agentRunning))
        }
        if json {
            context.say(JSONOutput.encode(items.map(WatchRuleJSON.init)))
        } else {
            context.say(WatchListView.render(items, now: nowMilliseconds()))
        }
        return items.contains { !$0.troubles.isEmpty } ? ExitStatus.attention : ExitStatus.ok
    }

    /// How the config's active rules stand, as the running agent wrote it down, for `status`
    /// and the status icon: what keeps them from their job, and the files they hold back.
    /// Each rule's row is read once for both.
    struct Standing {
        var troubles: [StatusJSON.WatchTrouble] = []
        /// Rule by rule, those holding any back.
        var heldBack: [(rule: String, held: HeldBack)] = []

        /// What `status` and the status icon print of it, one line each: the troubles, then
        /// the first files each rule holds back.
        func statusLines(now: Int64) -> [String] {
            troubles.map { "\($0.rule): \($0.message); \($0.action)" } + WatchListView.heldBackStatusLines(heldBack, now: now)
        }
    }

    /// A config that cannot be read shows as no trouble here: `status` is read to learn
    /// about the queue, and every other command names the broken line.
    static func standing(store: QueueStore, context: CommandContext) throws -> Standing {
        guard let rules = try? context.watchConfig().rules else { return Standing() }
        return try standing(of: rules, store: store)
    }

    /// The same for `rules` already read from the config.
    static func standing(of rules: [WatchRule], store: QueueStore) throws -> Standing {
        var standing = Standing()
        for rule in rules where !rule.paused {
            guard let status = try store.watchStatus(rule: rule.id) else { continue }
            let held = HeldBack.decode(status.waiting)
            if held.count > 0 { standing.heldBack.append((rule.id, held)) }
            // The rule's uploads are only asked whether one is unfinished, and only when
            // the rule has troubles at all.
            let stored = RuleTrouble.decode(status.troubles)
            guard !stored.isEmpty else { continue }
            standing.troubles += WatchListItem.troubles(stored, unfinished: try store.hasUnfinishedRows(rule: rule.id)).map {
                StatusJSON.WatchTrouble(rule: rule.id, code: $0.code, message: $0.message, action: $0.action)
            }
        }
        return standing
    }

    public static func remove(_ id: String, context: CommandContext) throws -> Int32 {
        let (text, rules) = try context.watchConfig()
        guard rules.contains(where: { $0.id == id }) else { return noSuchRule(id, context) }
        let store = try context.openStore()
        let pending = try store.watchOverview(rule: id).pending
        try context.writeConfig(try WatchRule.removing(id, from: text))
        try store.removeWatchMemory(rule: id)
        context.say("stopped watching for rule \(id)")
        if pending > 0 {
            context.say("\(pending) upload\(pending == 1 ? " it queued is" : "s it queued are") still in the queue; `instant-upload cancel ID` takes one out")
        }
        context.wakeAgent()
        return ExitStatus.ok
    }

    public static func setPaused(_ id: String, _ paused: Bool, context: CommandContext) throws -> Int32 {
        let (text, rules) = try context.watchConfig()
        guard var rule = rules.first(where: { $0.id == id }) else { return noSuchRule(id, context) }
        if rule.paused == paused {
            context.say("rule \(id) is \(paused ? "paused" : "not paused") already")
            return ExitStatus.ok
        }
        rule.paused = paused
        try context.writeConfig(try rule.writing(into: text))
        context.say(paused ? "paused rule \(id): its folder is not watched and its queued uploads wait; `instant-upload watch resume \(id)` goes on"
                    : "resumed rule \(id): what arrived meanwhile is uploaded, and its queued uploads go")
        if !paused { context.wakeOrStartAgent() } else { context.wakeAgent() }
        return ExitStatus.ok
    }

    /// Why `folder` cannot have a rule of its own: `other` watches it, or one around or
    /// inside it.
    private static func refusal(_ folder: LocalPath, _ other: WatchRule, _ overlap: WatchRule.Overlap) -> String {
        switch overlap {
        case .same:
            return "\(folder.display) is already watched by the rule \(other.id)" + (folder == other.folder ? "" : " (as \(other.folder.display))")
                + "; `instant-upload watch list` shows it"
        case .inside:
            return "\(folder.display) is inside \(other.folder.display), which the rule \(other.id) watches with everything below it; "
                + "a folder is watched by one rule only"
        case .around:
            return "\(folder.display) holds \(other.folder.display), which the rule \(other.id) watches already; a folder is watched by one rule only: "
                + "`instant-upload watch remove \(other.id)` first to watch all of it"
        }
    }

    private static func noSuchRule(_ id: String, _ context: CommandContext) -> Int32 {
        context.complain("there is no watch rule named \(DisplayText.escape(id)); `instant-upload watch list` shows them")
        return ExitStatus.attention
    }

    static func describe(_ media: MediaSelection) -> String {
        switch (media.pictures, media.videos) {
        case (true, false): "pictures"
        case (false, true): "videos"
        default: "pictures and videos"
        }
    }

    /// The folder as given, made absolute, without `.` parts or a trailing slash, so the
    /// same folder is always written the same way.
    static func normalized(_ folder: LocalPath) -> LocalPath {
        let parts = folder.absolute().bytes.split(separator: UInt8(ascii: "/")).filter { $0 != [UInt8(ascii: ".")] }
        return LocalPath(bytes: parts.isEmpty ? [UInt8(ascii: "/")] : parts.flatMap { [UInt8(ascii: "/")] + $0 })
    }

    private enum FolderKind { case folder, notAFolder, missing }

    private static func folderKind(_ path: LocalPath) -> FolderKind {
        var st = stat()
        guard path.withCString({ stat($0, &st) }) == 0 else { return .missing }
        return FileKind.of(mode: st.st_mode) == .directory ? .folder : .notAFolder
    }
}
