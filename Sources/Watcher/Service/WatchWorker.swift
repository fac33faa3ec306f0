import Glibc
import Platform
import Queue
import Synchronization
import Transport

/// The watch service's thread: the config's rules, the running watchers, their messages
/// and the queue connection, all owned here and changed nowhere else.
///
/// Each turn sleeps in `poll` until the inbox rings or the config's folder changes (with a
/// timeout only while something waits to be tried again: a database that was busy, a rule
/// whose account or inotify instance was missing), handles that, and sleeps again.
final class WatchWorker {
    let options: WatchService.Options
    let inbox: WatchInbox
    let published: PublishedRules
    /// Which rule folders are away; told what is mounted on each while it is watched.
    let presence: FolderPresence
    /// Where the watchers running are shown to the agent (`WatchService.arriving`).
    let watchers: RunningWatchers
    let clock = ContinuousClock()

    /// A rule whose watcher runs.
    struct RunningRule {
        var rule: WatchRule
        var account: Account
        var memory: RuleMemory
        var watcher: FolderWatcher
    }

    var store: QueueStore?
    /// The rules of the config as last read, in its order.
    var rules: [WatchRule] = []
    var running: [String: RunningRule] = [:]
    /// Rules stopped by a reload whose last found files are not recorded yet.
    var retired: [String: RunningRule] = [:]
    /// Rules that could not start, and why; tried again at `retryDue`.
    var waiting: [String: RuleTrouble] = [:]
    /// Why the config could not be read last time, shown on every rule until it can.
    var configProblem: RuleTrouble?
    /// Messages not handled yet, oldest first (kept when the database refused them).
    var backlog: [WatchInbox.Message] = []
    var retryDue: ContinuousClock.Instant?
    var reloadWanted = true
    /// The service asked this thread to end (seen by any take from the inbox).
    var stopRequested = false
    /// Rules whose status changed since it was last written down.
    var statusDirty: Set<String> = []
    /// Per running rule, files its watcher found (or could not read) that are not queued,
    /// with why: shown with the rule's troubles, and looked at again every
    /// `reconsiderDelay` until they are queued or gone.
    var unqueued: [String: [LocalPath: String]] = [:]
    /// Per running rule, files its watcher found that were gone when they were to be
    /// queued. One renamed in between is taken under its new name when the watcher's move
    /// says where it went (see `followVanished`); one deleted stays here until the rule stops.
    var vanished: [String: Set<LocalPath>] = [:]
    /// Rules with a copy of content whose upload has not completed: asked every
    /// `reconsiderDelay` (and when an upload of theirs completes) whether that upload
    /// failed, went away or sent other content.
    var waitingCopies: Set<String> = []

    /// Uploads queued in one transaction at most: a burst of thousands is committed in a
    /// few steps, and none holds the database for long.
    static let batchSize = 500
    static let retryDelay = Duration.seconds(2)
    static let waitingDelay = Duration.seconds(30)
    static let reconsiderDelay = Duration.seconds(10)

    init(options: WatchService.Options, inbox: WatchInbox, published: PublishedRules, presence: FolderPresence,
         watchers: RunningWatchers = RunningWatchers()) {
        self.options = options
        self.inbox = inbox
        self.published = published
        self.presence = presence
        self.watchers = watchers
    }

    func run() {
        CrashWindow.rulesUnread.pauseIfTesting()
        var config: ConfigFileWatch?
        var configUnwatched = false
        var fds = [pollfd(fd: inbox.wakeUp.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: -1, events: Int16(POLLIN), revents: 0)]
        while true {
            if let due = retryDue, due <= clock.now {
                retryDue = nil
                retryWaiting()
                reconsiderFiles()
            }
            // Messages first: what a watcher found is recorded under the rule it found it
            // by, and a doorbell's request to read the rules again is seen this turn.
            handleBacklog()
            if backlog.isEmpty { inbox.handled() }
            if reloadWanted, openStore() != nil {
                // Placed (again) with every reload until it works: out of inotify watches
                // or instances, changes are still heard through the agent's doorbell.
                if config == nil {
                    do { config = try ConfigFileWatch(file: options.paths.configFile) } catch {
                        if !configUnwatched {
                            Log.warning("cannot watch the config file for changes (\(error)); the commands that change rules tell the agent themselves")
                        }
                        configUnwatched = true
                    }
                    fds[1].fd = config?.fd ?? -1
                }
                reloadWanted = false
                reload()
            }
            writeStatuses()
            watchers.show(running.values.map(\.watcher), rulesRead: !reloadWanted)
            if stopRequested { break }
            if poll(&fds, nfds_t(fds.count), clock.pollTimeout(until: retryDue)) < 0, errno != EINTR {
                Log.error("watch service: \(SystemError("poll")); trying again in 1 s")
                sleep(1)
            }
            if fds[1].revents != 0, config?.changed() == true {
                Log.info("the config file changed; reading the watch rules again")
                reloadWanted = true
            }
            collect()
            if stopRequested { break }
        }
        shutDown()
    }

    /// Tries again later (a busy or full database, a rule waiting for something).
    func retry(after delay: Duration) {
        let due = clock.now + delay
        retryDue = retryDue.map { min($0, due) } ?? due
    }

    /// The queue connection of this thread, opened when first needed; nil (and a retry
    /// planned) while it cannot be opened.
    @discardableResult
    func openStore() -> QueueStore? {
        if let store { return store }
        do {
            store = try QueueStore(path: options.paths.queueDatabase)
        } catch {
            Log.warning("watch rules wait for the queue database: \(error)")
            retry(after: Self.retryDelay)
        }
        return store
    }

    /// Moves what the inbox holds to the backlog, noting a request to stop.
    func collect() {
        let (messages, stop) = inbox.take()
        backlog += messages
        if stop { stopRequested = true }
    }

    /// Stops every watcher, then records what they handed over until then.
    private func shutDown() {
        for run in running.values { run.watcher.stop() }
        collect()
        handleBacklog()
        running = [:]
        // What `watch list` reads is no longer true once no watcher runs.
        try? store?.clearWatchStatus()
    }

    // MARK: - Messages

    /// Handles the backlog in order: consecutive found files go to the queue in batches,
    /// everything else one by one. Stops at the first database error and keeps the rest.
    func handleBacklog() {
        guard !backlog.isEmpty, let store = openStore() else { return }
        var done = 0
        // Emptied, it is made anew: a library's first sweep hands over thousands of files
        // at once, and the array would keep their room for as long as the agent runs.
        defer { if done == backlog.count { backlog = [] } else { backlog.removeFirst(done) } }
        while done < backlog.count {
            var end = done
            while end < backlog.count, end - done < Self.batchSize, case .found = backlog[end] { end += 1 }
            do {
                if end > done {
                    try take(backlog[done..<end], store: store)
                    done = end
                } else {
                    try handle(backlog[done], store: store)
                    done += 1
                }
            } catch {
                Log.warning("watch rules: the queue database refused an update (\(error)); trying again in \(Self.retryDelay)")
                retry(after: Self.retryDelay)
                return
            }
        }
    }

    private func handle(_ message: WatchInbox.Message, store: QueueStore) throws {
        switch message {
        case .found:
            break  // taken in batches by handleBacklog
        case .moved(let rule, let from, let to):
            // Rows in progress are the agent's to change: it is asked, and rung.
            if try store.moveTaken(rule: rule, from: from, to: to) > 0 { options.wake() }
            if let reason = unqueued[rule]?.removeValue(forKey: from) { unqueued[rule]?[to] = reason }
            followVanished(rule, from: from, to: to)
            Log.debug("\(rule): \(from.display) is now \(to.display); not sent again")
        case .exchanged(let rule, let a, let b):
            if try store.exchangeTaken(rule: rule, a, b) > 0 { options.wake() }
            LocalPath.exchange(a, b) { from, to in
                if let reason = unqueued[rule]?.removeValue(forKey: from) { unqueued[rule]?[to] = reason }
            }
            Log.info("rule \(rule): \(a.display) and \(b.display) swapped names; neither is sent again")
            confirmSwap(rule, a, b, store: store)
        case .notQueued(let rule, let path, let reason):
            noteUnqueued(rule, path, reason)
        case .baseline(let rule, let files):
            try store.recordBaseline(rule: rule, files: files.map { TakenFile(path: $0.0, fingerprint: $0.1, kind: .baseline) })
            Log.info("\(rule): \(files.count) file\(files.count == 1 ? " was" : "s were") in the folder when the rule was added; left alone (the rule's `existing` setting uploads them)")
        case .mounted(let folder, let device):
            try store.rememberMountPoint(folder, device: device)
        case .status(let rule):
            statusDirty.insert(rule)
        case .completed(let row):
            try afterUpload(row, store: store)
        case .lookAgain:
            reloadWanted = true
            // A row cancelled or cleared may be one a copy waits on.
            if !waitingCopies.isEmpty { retry(after: .zero) }
        }
    }

    /// Checks a swap of two sent files against what was sent. The watcher tells a swap by
    /// each file's device, inode, size and modification time, found at the other's name; a
    /// new file saved where a renamed one left, given the inode the rename freed, with the
    /// same size and a modification time of the same second (raw files of one burst, dated
    /// from the camera), passes for the file that was there, and would never be sent. Each
    /// file whose bytes are not those its record vouches for (what its upload sent, or for a
    /// copy of content already taken, that content) is taken as new.
    ///
    /// Only a file still as the swap found it (its record's fingerprint), up to
    /// `swapCheckLimit`, and only once the swap is recorded: the check never fails the
    /// message, which would apply the swap again. Rows not completed send what the file
    /// holds when they go.
    func confirmSwap(_ rule: String, _ a: LocalPath, _ b: LocalPath, store: QueueStore) {
        guard let run = running[rule] else { return }
        let other: [LocalPath]
        do {
            let records = try store.takenRecords(rule: rule, paths: [a, b])
            other = [a, b].filter { path in
                guard let record = records[path], let sent = Self.vouchedContent(record),
                      record.file.fingerprint.size <= Self.swapCheckLimit,
                      // Nil unless the file is still as the swap found it, before and after the read.
                      let now = ContentHash.sha256(of: path, expecting: record.file.fingerprint) else { return false }
                return now != sent
            }
            guard !other.isEmpty else { return }
            try store.forgetTaken(rule: rule, paths: other)
        } catch {
            Log.warning("rule \(rule): the swap of \(a.display) and \(b.display) could not be checked against what was sent: \(error)")
            return
        }
        for path in other {
            run.memory.taken.remove(path)
            Log.warning("rule \(rule): \(path.display) looked like a photo already taken, under a new name, but its content is another; it is taken as a new file")
        }
        run.watcher.reconsider(other)
    }

    /// The SHA-256 a taken file's record vouches for: a copy's, the content it was found to
    /// hold (hashed when it was taken); another file's, what its completed upload sent.
    static func vouchedContent(_ record: TakenRecord) -> String? {
        if record.file.kind == .duplicate { return record.file.sha256 }
        if case .completed(let sent?)? = record.upload { return sent }
        return nil
    }

    /// The largest file whose swap is checked by reading it: a photo or a raw file, which is
    /// where files of one size come from; longer reads would hold up every rule's intake.
    static let swapCheckLimit: Int64 = 256 << 20

    /// A file a rule's watcher found is not queued: it shows with the rule's troubles and
    /// is looked at again until it is queued or gone.
    func noteUnqueued(_ rule: String, _ path: LocalPath, _ reason: String) {
        guard running[rule] != nil else { return }
        if unqueued[rule]?[path] != reason {
            Log.warning("rule \(rule): \(path.display) is not queued: \(reason); it is looked at again every \(Self.reconsiderDelay)")
        }
        unqueued[rule, default: [:]][path] = reason
        statusDirty.insert(rule)
        retry(after: Self.reconsiderDelay)
    }

    /// A move that names found files which were gone when they were to be queued (the file
    /// itself, or a folder above it): they were renamed before the queue got them. The
    /// watcher, whose memory already calls them taken under their new names, is asked to
    /// look at them again there, and hands them over anew. One not at its new name either
    /// was renamed again, and waits for that move.
    func followVanished(_ rule: String, from: LocalPath, to: LocalPath) {
        guard let paths = vanished[rule]?.filter({ $0.isWithin(from) }), !paths.isEmpty, let run = running[rule] else { return }
        vanished[rule]?.subtract(paths)
        var there: [LocalPath] = []
        for path in paths {
            let moved = path.moved(from: from, to: to)
            if FileIO.nameExists(moved) { there.append(moved) } else { vanished[rule]?.insert(moved) }
        }
        for path in there {
            run.memory.taken.remove(path)
            Log.debug("\(rule): \(path.display) was renamed before it was queued; taking it under its new name")
        }
        run.watcher.reconsider(there)
    }

    /// Hands back to their watchers the files that are to be looked at again: those found
    /// and not queued, and copies whose upload they waited on failed, went away or sent
    /// other content (their records are forgotten, so they are taken like new files).
    /// Planned again while any are left.
    func reconsiderFiles() {
        guard !unqueued.isEmpty || !waitingCopies.isEmpty, let store = openStore() else { return }
        for id in Set(unqueued.keys).union(waitingCopies).sorted() {
            guard let run = running[id] else {
                unqueued[id] = nil
                waitingCopies.remove(id)
                continue
            }
            var paths: [LocalPath] = []
            for path in (unqueued[id] ?? [:]).keys.sorted() {
                if FileIO.nameExists(path) { paths.append(path) } else {
                    unqueued[id]?[path] = nil  // gone: there is nothing to send
                    statusDirty.insert(id)
                }
            }
            if unqueued[id]?.isEmpty == true { unqueued[id] = nil }
            if waitingCopies.contains(id) {
                do {
                    let copies = try store.copiesToSend(rule: id)
                    if !copies.isEmpty {
                        try store.forgetTaken(rule: id, paths: copies)
                        Log.info("rule \(id): the upload \(copies.count == 1 ? "a copy" : "\(copies.count) copies") waited on failed, went away or sent other content; "
                                 + "sending \(copies.count == 1 ? copies[0].display : "them") instead")
                        paths += copies
                    }
                    if try !store.hasWaitingCopies(rule: id) { waitingCopies.remove(id) }
                } catch {
                    retry(after: Self.retryDelay)
                }
            }
            for path in paths { run.memory.taken.remove(path) }
            run.watcher.reconsider(paths)
        }
        if !unqueued.isEmpty || !waitingCopies.isEmpty { retry(after: Self.reconsiderDelay) }
    }
}
