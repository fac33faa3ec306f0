import Glibc
import Platform
import Queue

/// Rules coming, changing and going: the config read again, watchers started and stopped,
/// and what `watch list` reads about each.
extension WatchWorker {
    /// Reads the config's rules and brings the watchers in line: a rule that changed in
    /// any way is stopped and started again (its memory stays), a removed or paused one is
    /// stopped, a new one started. A config that cannot be read changes nothing and says so.
    func reload() {
        guard let store = openStore() else {
            reloadWanted = true
            return
        }
        let loaded: [WatchRule]
        do { loaded = try Self.readRules(options.paths.configFile) } catch {
            let problem = RuleTrouble.configProblem("\(error)")
            if configProblem != problem { Log.error("watch rules: \(problem)") }
            configProblem = problem
            statusDirty.formUnion(rules.map(\.id))
            return
        }
        configProblem = nil
        let byID = published.set(loaded)
        do {
            try store.keepMountPoints(of: Set(loaded.map(\.folder)))
            presence.remember(try store.mountPoints())
        } catch {
            Log.warning("the mount points seen on watched folders cannot be read (\(error)); a card taken out while the agent was stopped is not known as such")
        }
        rules = loaded
        let changed = running.keys.filter { byID[$0] != running[$0]?.rule }.sorted()
        for id in changed {
            running[id]?.watcher.stop()
            retired[id] = running.removeValue(forKey: id)
            // Its new watcher finds again what this one could not queue.
            unqueued[id] = nil
            vanished[id] = nil
            statusDirty.insert(id)
            Log.info(byID[id] == nil ? "stopped watching for rule \(id): it is no longer in the config" : "rule \(id) changed")
        }
        // What the stopped watchers handed over is recorded under the rule they found it
        // by, before any watcher of the same rule looks at the folder again; otherwise
        // the new one would find those files new too.
        collect()
        handleBacklog()
        guard backlog.isEmpty else {
            reloadWanted = true
            return
        }
        retired = [:]
        waiting = waiting.filter { byID[$0.key] != nil }
        for rule in loaded where running[rule.id] == nil { start(rule, store: store) }
    }

    static func readRules(_ path: String) throws -> [WatchRule] {
        guard FileIO.exists(path) else { return [] }
        let text: String
        do { text = try FileIO.readSmallFile(path) } catch { throw WatchRule.ConfigProblem(line: 0, message: error.reason) }
        return try WatchRule.rules(inConfig: text)
    }

    /// Starts the watcher of `rule` with its memory, or notes why it cannot run yet.
    func start(_ rule: WatchRule, store: QueueStore) {
        do {
            // The memory belongs to the rule's folder: another folder starts a new one.
            var memory = try store.watchMemory(rule: rule.id)
            if memory?.folder != rule.folder {
                if let old = memory {
                    Log.info("rule \(rule.id) now watches \(rule.folder.display) instead of \(old.folder.display): it starts a new memory of what it took")
                }
                try store.resetWatchMemory(rule: rule.id, folder: rule.folder)
                memory = WatchMemory(rule: rule.id, folder: rule.folder, baselineAt: nil)
            }
            if rule.paused {
                waiting[rule.id] = nil
                statusDirty.insert(rule.id)
                return
            }
            // One folder, one rule: a rule whose folder an earlier rule of the config
            // watches (the same, around it or inside it) would send its files twice.
            if let trouble = folderTrouble(of: rule) {
                wait(rule, trouble)
                return
            }
            guard let account = try account(for: rule, store: store) else {
                wait(rule, .accountMissing(rule.account))
                return
            }
            var baselining = !rule.existing && memory?.baselineAt == nil
            if baselining, Self.isMissing(rule.folder) {
                // Not there when the rule came: whatever it holds when it appears (a card
                // inserted) arrived after the rule, and is sent.
                try store.recordBaseline(rule: rule.id, files: [])
                baselining = false
                Log.info("rule \(rule.id): \(rule.folder.display) is not there yet; what it holds when it appears is uploaded")
            }
            let taken = TakenSet()
            try store.eachTakenFile(rule: rule.id) { path, fingerprint in taken.insert(fingerprint, at: path) }
            if try store.hasWaitingCopies(rule: rule.id) {
                waitingCopies.insert(rule.id)
                retry(after: .zero)
            }
            let ruleMemory = RuleMemory(taken: taken, baselining: baselining)
            var settings = rule.watcherSettings
            settings.mountTable = options.mountTable
            settings.unfinishedWait = options.unfinishedWait
            let watcher = FolderWatcher(settings: settings, taken: ruleMemory,
                                        handler: Self.handler(rule: rule.id, folder: rule.folder, memory: ruleMemory, inbox: inbox,
                                                                      presence: presence))
            try watcher.start()
            running[rule.id] = RunningRule(rule: rule, account: account, memory: ruleMemory, watcher: watcher)
            waiting[rule.id] = nil
            statusDirty.insert(rule.id)
            Log.info("watching \(rule.folder.display) for rule \(rule.id), into \(account.name):\(rule.remoteFolder)"
                     + (ruleMemory.isBaselining ? "; what the folder holds when first seen is left alone" : "; \(taken.count) file(s) remembered"))
            try finishAfterUploads(of: rule, store: store)
        } catch let trouble as WatcherTrouble {
            wait(rule, RuleTrouble(trouble))
        } catch {
            Log.warning("rule \(rule.id) waits for the queue database: \(error)")
            reloadWanted = true
            retry(after: Self.retryDelay)
        }
    }

    /// Why `rule` may not watch its folder: an earlier rule of the config (paused or not)
    /// watches the same folder, one around it, or one inside it. Folders are compared by
    /// their real paths and, where they are there, by device and inode.
    func folderTrouble(of rule: WatchRule) -> RuleTrouble? {
        for other in rules {
            if other.id == rule.id { return nil }
            guard let overlap = WatchRule.overlap(of: rule.folder, with: other.folder) else { continue }
            return .folderWatchedTwice(rule: rule, by: other, overlap)
        }
        return nil
    }

    /// Whether `folder` is not there (nor a file in its place).
    static func isMissing(_ folder: LocalPath) -> Bool {
        do throws(SystemError) {
            _ = try FileIO.status(folder)
            return false
        } catch {
            return [ENOENT, ENOTDIR].contains(error.errno)
        }
    }

    /// The account a rule uploads to: the one it names, or the only one there is.
    func account(for rule: WatchRule, store: QueueStore) throws -> Account? {
        if let name = rule.account { return try store.account(named: name) }
        let all = try store.accounts()
        return all.count == 1 ? all[0] : nil
    }

    /// `rule` cannot run now: say why, and try again in a while.
    func wait(_ rule: WatchRule, _ trouble: RuleTrouble) {
        if waiting[rule.id] != trouble { Log.warning("rule \(rule.id) is not watching: \(trouble)") }
        waiting[rule.id] = trouble
        statusDirty.insert(rule.id)
        retry(after: Self.waitingDelay)
    }

    func retryWaiting() {
        guard let store = openStore() else { return }
        for rule in rules where waiting[rule.id] != nil && running[rule.id] == nil { start(rule, store: store) }
    }

    /// What a rule's watcher tells the service, from the watcher's thread: the memory
    /// learns at once (the watcher asks it next), the rest goes to the inbox.
    static func handler(rule id: String, folder: LocalPath, memory: RuleMemory, inbox: WatchInbox,
                        presence: FolderPresence) -> FolderWatcher.Handler {
        { event in
            switch event {
            case .found(let file):
                // A card mounted while the folder was watched shows here first.
                if let device = presence.note(folder) { inbox.post(.mounted(folder: folder, device: device)) }
                memory.taken.insert(file.fingerprint, at: file.path)
                inbox.post(.found(rule: id, file))
            case .moved(let from, let to, _):
                memory.taken.move(from, to: to)
                inbox.post(.moved(rule: id, from: from, to: to))
            case .exchanged(let a, let b):
                memory.taken.exchange(a, b)
                inbox.post(.exchanged(rule: id, a, b))
            case .notTaken(let path, let error):
                inbox.post(.notQueued(rule: id, path, reason: LocalFileWords.unreadableFile(error.errno)))
            case .status(let status):
                // What is mounted on the folder, while it is watched: a card on a fixed mount
                // point, later unmounted, is then known to have been there.
                if status.state == .watching, let device = presence.note(folder) { inbox.post(.mounted(folder: folder, device: device)) }
                // Published right after the first whole walk of the folder.
                if status.state == .watching || status.state == .scanningPeriodically, let files = memory.endBaseline() {
                    inbox.post(.baseline(rule: id, files))
                }
                inbox.post(.status(rule: id))
            case .problem:
                inbox.post(.status(rule: id))
            case .left:
                // A rule's records stay: a file deleted is never deleted on the server.
                break
            }
        }
    }

    // MARK: - Status

    /// Writes down how each rule whose status changed stands now.
    func writeStatuses() {
        guard !statusDirty.isEmpty, let store else { return }
        for id in statusDirty.sorted() {
            let config = configProblem.map { [$0] } ?? []
            let record: WatchStatusRecord
            if let run = running[id] {
                let status = run.watcher.status
                let notQueued = RuleTrouble.notQueued(unqueued[id] ?? [:], every: Self.reconsiderDelay)
                record = WatchStatusRecord(state: status.state.rawValue,
                                           troubles: RuleTrouble.encode(status.troubles.map(RuleTrouble.init) + notQueued + config),
                                           waiting: HeldBack(status.waiting).encoded,
                                           watchedFolders: status.watchedFolders, overflows: status.overflows, scans: status.scans)
            } else if let trouble = waiting[id] {
                record = WatchStatusRecord(state: "not_watching", troubles: RuleTrouble.encode([trouble] + config), watchedFolders: 0, overflows: 0, scans: 0)
            } else {
                let paused = rules.first { $0.id == id }?.paused == true
                record = WatchStatusRecord(state: paused ? "paused" : WatcherStatus.State.stopped.rawValue, troubles: RuleTrouble.encode(config),
                                           watchedFolders: 0, overflows: 0, scans: 0)
            }
            do { try store.setWatchStatus(rule: id, record) } catch {
                retry(after: Self.retryDelay)
                return
            }
            statusDirty.remove(id)
        }
    }
}
