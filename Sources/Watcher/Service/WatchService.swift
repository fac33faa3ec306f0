import Platform
import Queue

/// Instant upload inside the agent: one `FolderWatcher` per active rule of the config, the
/// files they find queued through the shared intake, and the rule's memory of what it took
/// kept in the queue database.
///
/// Concurrency in a sentence: everything the service decides happens on its own thread
/// (`WatchWorker`), which sleeps in `poll` on its inbox and on the config file's folder;
/// the watchers' threads and the agent only post to that inbox, and read the published
/// rules to decide holds.
public final class WatchService: Sendable {
    public struct Options: Sendable {
        public var paths: XDGPaths
        /// Where the power supply is read from (tests use a prepared folder).
        public var sysfsRoot = "/sys"
        /// Watched for cards and disks coming and going; nil to not watch it.
        public var mountTable: String? = "/proc/self/mountinfo"
        /// How long a file that looks unfinished waits before it is taken as it is (see
        /// `WatcherSettings.unfinishedWait`; tests wait less).
        public var unfinishedWait: Duration = .seconds(600)
        /// Rung whenever new uploads were queued.
        public var wake: @Sendable () -> Void

        public init(paths: XDGPaths, wake: @escaping @Sendable () -> Void) {
            self.paths = paths
            self.wake = wake
        }
    }

    let options: Options
    /// The rules of the config as last read, for `hold`.
    let published = PublishedRules()
    /// Which rule folders are away, cards on fixed mount points included.
    let presence = FolderPresence()
    /// The watchers the service's thread runs, for `arriving`.
    let watchers = RunningWatchers()
    private let running = Locked<(thread: DedicatedThread, inbox: WatchInbox)?>(nil)

    public init(options: Options) { self.options = options }

    /// Starts the service's thread, which reads the rules and starts their watchers.
    public func start() throws(SystemError) {
        loadBeforeFirstPass()
        try running.withLock { (running: inout (thread: DedicatedThread, inbox: WatchInbox)?) throws(SystemError) in
            guard running == nil else { return }
            let inbox = try WatchInbox()
            let (options, published, presence, watchers) = (self.options, self.published, self.presence, self.watchers)
            let thread = try DedicatedThread(name: "iu-watch") {
                WatchWorker(options: options, inbox: inbox, published: published, presence: presence, watchers: watchers).run()
            }
            running = (thread, inbox)
        }
    }

    /// What decides whether a rule's uploads may go, known before the scheduler's first
    /// pass rather than once the service's thread has read it: the rules (a paused or
    /// Wi-Fi-only rule's photos would go otherwise), and the mount points seen by earlier
    /// runs (a card taken out while the agent was stopped). The thread reads both again
    /// whenever it reads the rules, so a queue that could not be read now is read then.
    private func loadBeforeFirstPass() {
        if let rules = try? WatchWorker.readRules(options.paths.configFile) {
            published.set(rules)
        }
        do {
            presence.remember(try QueueStore(path: options.paths.queueDatabase).mountPoints())
        } catch {
            Log.warning("the mount points seen on watched folders cannot be read yet (\(error)); they are read again with the rules")
        }
    }

    /// Stops every watcher, records what they found until then, and ends the thread.
    public func stop() {
        guard let run = running.withLock({ (running: inout (thread: DedicatedThread, inbox: WatchInbox)?) in
            defer { running = nil }
            return running
        }) else { return }
        run.inbox.requestStop()
        run.thread.join()
    }

    /// What is on its way from the watched folders to the queue now, in words; nil when
    /// the rules were read, each running watcher walked its folder and has nothing
    /// settling, and what they handed over is queued, or when the service does not run.
    /// (Watchers first: a watcher posts what it found before it says it is quiet.)
    public var arriving: String? {
        guard let inbox = running.withLock({ $0?.inbox }) else { return nil }
        if let words = watchers.arriving { return words }
        return inbox.isEmpty ? nil : "files found in the watched folders being queued"
    }

    /// Why `rule`'s queued uploads to `account` must wait now, or nil (see `RuleHold`).
    /// `wifi` is nil when the way out is unmetered Wi-Fi, else why not.
    public func hold(rule: String, account: Account, wifi: () -> String?) -> Reason? {
        let current = published.rule(rule)
        let sysfs = options.sysfsRoot
        return RuleHold.reason(rule: current, account: account, wifi: wifi, power: { PowerSource.current(sysfsRoot: sysfs) },
                               folderAbsence: presence.absence(of:))
    }

    /// Why a file of `rule` that cannot be opened or read (`file`, recorded on the file
    /// system `device`) waits rather than fails: the rule's folder is away (see
    /// `FolderPresence`). Nil when the folder is there, or the rule is no longer in the config.
    public func folderAway(rule: String, file: LocalPath, device: UInt64?) -> Reason? {
        guard let current = published.rule(rule),
              let absence = presence.fileMissing(file, device: device, folder: current.folder) else { return nil }
        return RuleHold.folderAway(current, absence)
    }

    /// Whether `rule` moves the originals of its uploads to the trash (which needs the server
    /// to show each file first).
    public func trashesOriginals(rule: String) -> Bool { published.rule(rule)?.afterUpload == .trash }

    /// An upload completed: its rule may move the original to the trash.
    public func uploadCompleted(_ row: Transfer) {
        guard row.watchRule != nil else { return }
        post(.completed(row))
    }

    /// Another process said something changed: the config is read again (in case its
    /// change went unheard) and rules waiting for an account try again.
    public func lookAgain() { post(.lookAgain) }

    private func post(_ message: WatchInbox.Message) {
        running.withLock { $0?.inbox }?.post(message)
    }
}

/// The watchers the service's thread runs, as it last showed them, and whether it has
/// read the rules it was last asked to read.
final class RunningWatchers: Sendable {
    private let state = Locked<(rulesRead: Bool, watchers: [FolderWatcher])>((false, []))

    func show(_ watchers: [FolderWatcher], rulesRead: Bool) { state.withLock { $0 = (rulesRead, watchers) } }

    /// What the watchers still bring, in words; nil when the rules were read and every
    /// watcher is quiet.
    var arriving: String? {
        let (read, watchers) = state.withLock { $0 }
        guard read else { return "the watch rules being read" }
        let words = watchers.compactMap(\.arriving)
        return words.isEmpty ? nil : words.joined(separator: "; ")
    }
}

/// The config's rules as the service last read them, for the scheduler's questions.
final class PublishedRules: Sendable {
    private let rules = Locked<[String: WatchRule]>([:])

    func rule(_ id: String) -> WatchRule? { rules.withLock { $0[id] } }
    /// Publishes `new` (the first of two rules with one name); returns them by name.
    @discardableResult
    func set(_ new: [WatchRule]) -> [String: WatchRule] {
        let byID = Dictionary(new.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        rules.withLock { $0 = byID }
        return byID
    }
}
