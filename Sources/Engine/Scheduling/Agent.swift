import Dispatch
import Glibc
import Platform
import Queue
import Transport

/// The long-lived agent: takes rows from the queue, runs transfers within their budgets,
/// and is the only one to move a row out of `in_progress`.
///
/// Concurrency in a sentence: the scheduling loop runs on the thread that called `run()`
/// and owns all row transitions; each transfer, each cancellation's clean-up on the server
/// and each password lookup runs on a thread of its own (the transfers share the loop's
/// database connection) and reports back through `state`, ringing the doorbell.
public final class Agent: Sendable {
    public struct Options: Sendable {
        public var paths: XDGPaths
        public var uploadSlots = 3
        public var downloadSlots = 3
        public var settings = TransferSettings()
        public var backoff = Backoff()
        /// Stop by itself once no row is queued, running or retrying, and nothing is on its
        /// way to the queue (`arriving`).
        public var exitWhenIdle = false
        /// What is still on its way to the queue from elsewhere in the process, in words (a
        /// watched folder not walked yet, a new file or an edit settling, a file found and
        /// not recorded yet); nil when nothing is. `exitWhenIdle` waits for it, and says so.
        public var arriving: (@Sendable () -> String?)?
        /// Told once per batch of rows that just failed and need the person.
        public var onAttention: (@Sendable ([Transfer]) -> Void)?
        /// Told when the last of the work a person asked for by hand is done.
        public var onBatchDone: (@Sendable (DoneByHand) -> Void)?
        /// Whether a row held by a Wi-Fi-only rule may go now (asked at dispatch, so a
        /// changed rule or network applies to rows already queued).
        public var wifiGate: (@Sendable () -> Bool)?
        /// Whether a watch rule's auto-uploads must wait now, and why (its own Wi-Fi
        /// setting, mains power, a pause, its folder not there). Asked at dispatch, once per
        /// rule and pass, so a changed rule, network, power supply or folder applies to rows
        /// already queued. Without it a rule's rows follow their account's Wi-Fi flag.
        public var ruleHold: (@Sendable (_ rule: String, _ account: Account) -> Reason?)?
        /// Why a watch rule's upload whose file (its path, and the device its fingerprint
        /// recorded) cannot be opened or read waits for it rather than failing: the rule's
        /// folder is away (a card taken out, or unmounted from a fixed mount point), and the
        /// file may come back with it. Nil when the folder is there; without it such a file fails.
        public var folderAway: (@Sendable (_ rule: String, _ file: LocalPath, _ device: UInt64?) -> Reason?)?
        /// Told of each transfer that just completed, with its row as recorded.
        public var onCompleted: (@Sendable (Transfer) -> Void)?
        /// Told, on the transfer's own thread, where a download has just put its file, before
        /// its row completes: whatever waited to follow a file away from that name must do
        /// so now (the name was free, so that file was renamed, not saved over).
        public var onDownloadPlaced: (@Sendable (LocalPath, FileFingerprint) -> Void)?
        /// Whether something relies on an upload's file being on the server once it completes
        /// (its watch rule moves originals to the trash): the server is then asked to show it.
        public var needsProof: (@Sendable (Transfer) -> Bool)?
        /// Called once this agent holds its lock and has its queue open: from then on
        /// other producers in the process (the folder watchers) may add work.
        public var onStarted: (@Sendable () -> Void)?
        /// Told when another process rang the doorbell: it may have changed the config or
        /// the accounts as well as the queue.
        public var onDoorbell: (@Sendable () -> Void)?
        /// Looks up an account's password (Secret Service or the credentials file). The
        /// agent asks once per account and keeps the answer.
        public var credentials: @Sendable (Account) -> CredentialLookup

        public init(paths: XDGPaths, credentials: @escaping @Sendable (Account) -> CredentialLookup) {
            self.paths = paths
            self.credentials = credentials
        }
    }

    /// Why a running transfer is being stopped from outside.
    enum StopCause: Sendable { case cancel, shutdown, offline, pause }

    struct Running: Sendable {
        var direction: Direction
        var accountID: Int64
        /// Asked for by a person (upload, download, share-to), not by a watch rule.
        var isManual = false
        var cancellation: CancellationFlag
        var stopCause: StopCause?
        /// The transfer's bytes as it counts them, and what of it the row holds.
        var progress = TransferProgress()
        var progressWritten: Int64?
    }

    /// A transfer's outcome on its way to the row.
    struct Finished: Sendable {
        var id: Int64
        var outcome: JobOutcome
        var cause: StopCause?
    }

    /// How hard an account's server may be pushed right now. A 423/429/503 halves what
    /// is in flight for that account and holds new work until its `Retry-After`; each
    /// completed transfer lets one more in again. A server that cannot be reached at all, or
    /// fails every request, holds the account's new work until the failed transfer's next
    /// try (`down` says why), so a backlog waits for the server instead of each file trying
    /// it in turn (`Agent+Gates.swift`).
    struct AccountPressure: Sendable {
        var limit: Int
        /// Until when the server asked us to wait (`Retry-After`): a transfer completing
        /// meanwhile does not shorten it.
        var busyUntil: Int64 = 0
        /// Until when a server that is down is left alone (the failed transfer's next try):
        /// a completion lifts it, with `down`.
        var downUntil: Int64 = 0
        var holdUntil: Int64 { max(busyUntil, downUntil) }
        /// What the account's waiting rows say once the server asked to wait, until one of
        /// its transfers completes.
        var busy: Reason?
        var down: Reason?
        /// What the account's held rows say.
        var note: Reason? { down ?? busy }
        /// Different files that failed with a server error since the last that did not.
        var failingRows: Set<Int64> = []
    }

    /// How many transfers at once an account's server showed it takes: one fewer than were
    /// in flight when it answered busy (429), as a server that bounds each account's
    /// concurrent uploads does. Kept for `busyBoundKept` after the last such answer, then
    /// the configured number is tried again; a pressure's halving and its recovery stay
    /// below it meanwhile, so a bounded server is not refused into a pause once a second.
    struct LearnedBound: Sendable {
        var atOnce: Int
        var until: Int64
    }

    /// How long a bound learned from a 429 holds.
    static let busyBoundKept: Int64 = 10 * 60_000

    struct State: Sendable {
        var running: [Int64: Running] = [:]
        var finished: [Finished] = []
        /// Outcomes the database refused to record; tried again on the next pass.
        var unapplied: [Finished] = []
        /// Cancelled rows whose clean-up (server, `.part`, row) runs on its own thread.
        var cancelling: [Int64: CancellationFlag] = [:]
        var stopping = false
        var pressure: [Int64: AccountPressure] = [:]
        var bounds: [Int64: LearnedBound] = [:]
        /// Hand-made transfers completed since the last "done" notice.
        var manualDone = DoneByHand()
        /// Failures not yet told, gathered so that one batch makes one notification.
        var pendingFailed: [Transfer] = []
        var firstPendingAt: Double = 0
        /// The whole queue's gate: false while there is no usable default route.
        var online = true
        /// The disk holding the queue is full: nothing can be recorded, so nothing starts.
        var diskFull = false
        /// The person paused the whole queue (`pause --all`): nothing starts, nothing runs.
        var pausedByYou = false
        /// The pause as the rows last saw it, so each change is written once.
        var appliedPause: ReasonCode?
        /// The figures `status` reads for the current batch: its rate and when it started.
        var batch = BatchRecord()
        /// When running transfers' progress was last written (monotonic seconds).
        var progressWrittenAt: Double = 0
        var arrivalWait = ArrivalWait()

        /// Stops a running transfer at its last checkpoint, for `cause`. A transfer already
        /// stopping keeps its first cause, unless `cause` is a cancel, which always wins (the
        /// row is going away). Returns whether it was running and is now stopping for `cause`.
        @discardableResult
        mutating func stopRunning(_ id: Int64, because cause: StopCause) -> Bool {
            guard var run = running[id] else { return false }
            if run.stopCause != nil && cause != .cancel { return false }
            run.stopCause = cause
            run.cancellation.cancel()
            running[id] = run
            return true
        }

        /// Stops every running transfer that is not stopping already; returns which, in order.
        @discardableResult
        mutating func stopAllRunning(because cause: StopCause, where include: (Int64) -> Bool = { _ in true }) -> [Int64] {
            running.keys.sorted().filter { include($0) && stopRunning($0, because: cause) }
        }

        /// What holds the whole queue, if anything, as `status` hears it from the agent.
        var pause: ReasonCode? { diskFull ? .diskFull : recordedPause }
        /// The part of it written to the rows: a full disk takes no notes. The person's pause
        /// holds the queue whatever the network does, so it is the one the rows tell.
        var recordedPause: ReasonCode? { pausedByYou ? .paused : online ? nil : .offline }
    }

    let options: Options
    let state = Locked(State())
    let doorbell = DispatchSemaphore(value: 0)
    let serverInfo = ServerInfoCache()
    let passwords: CredentialCache
    let maintenance: MaintenanceWatch
    /// The transfers' threads, each kept a few seconds for the next transfer.
    let transferThreads = ReusedThreads()

    public init(options: Options) {
        self.options = options
        passwords = CredentialCache(lookup: options.credentials)
        maintenance = MaintenanceWatch(ask: MaintenanceWatch.statusPage(settings: options.settings))
    }

    /// Wakes the scheduling loop: something changed in the database or in the world.
    public func wake() { doorbell.signal() }

    /// The connectivity monitor's verdict, at each change of the network. Going offline stops
    /// in-flight transfers at their last checkpoint (nothing fails, no attempt is counted);
    /// coming back resumes.
    public func networkChanged(online: Bool) {
        let changed = state.withLock { s -> Bool in
            guard s.online != online else { return false }
            s.online = online
            if !online { s.stopAllRunning(because: .offline) }
            return true
        }
        if changed { Log.info(online ? "network is back: resuming the queue" : "network is gone: the queue waits for it") }
        // Even on the same side: another network (Wi-Fi, metered or not) may open a gate.
        wake()
    }

    /// Asks the agent to stop: transfers end at their last checkpoint, rows go back to queued.
    public func stop() {
        state.withLock { s in
            s.stopping = true
            s.stopAllRunning(because: .shutdown)
            for flag in s.cancelling.values { flag.cancel() }
        }
        wake()
    }

    /// Runs until `stop()`. Throws when another agent already runs, or the queue cannot be
    /// opened for good (damaged, foreign, newer); a busy or full database is waited out.
    public func run() throws {
        let lock = try InstanceLock(path: options.paths.agentLock)
        let socket = try ControlSocketServer(path: options.paths.controlSocket) { [self] request in
            handle(request)
        }
        socket.start()
        defer { socket.close(); withExtendedLifetime(lock) {} }
        var trouble = DatabaseTrouble(folder: options.paths.stateDirectory)
        guard let store = try openStore(&trouble) else { return }
        Log.info("agent started; queue \(options.paths.queueDatabase)")
        options.onStarted?()

        var recovered = false
        while true {
            let stopping = state.withLock { $0.stopping }
            var nextRetry: Int64?
            if trouble.worthTrying {
                do {
                    if !recovered {
                        let count = try store.recoverAbandoned()
                        if count > 0 { Log.info("took back \(count) transfer(s) left running by a previous agent; they resume from their checkpoints") }
                        try store.setAgentValue("paused_reason", nil)
                        recovered = true
                    }
                    nextRetry = try pass(store, stopping: stopping)
                    trouble.cleared()
                } catch {
                    try trouble.record(error)
                }
                let wasFull = state.withLock { s in
                    defer { s.diskFull = trouble.diskFull }
                    return s.diskFull
                }
                // The pass that found the disk writable again started nothing (it went by the
                // full disk): the next one goes at once, not at the next retry or after 5 s.
                if wasFull, !trouble.diskFull { wake() }
            }
            if stopping {
                if state.withLock({ $0.running.isEmpty && $0.cancelling.isEmpty }) { break }
            } else if options.exitWhenIdle, trouble.failures == 0, isIdle(store) {
                break
            }
            wait(store, trouble: trouble.delay, nextRetry: nextRetry)
        }
        // One last try at what is still unrecorded; rows left running are taken back by
        // the next agent from their checkpoints.
        try? recordOutcomes(store)
        Log.info("agent stopped")
    }

    /// Opens the queue, waiting out a busy or full database (while `status` can already
    /// ask why). Nil when asked to stop meanwhile.
    private func openStore(_ trouble: inout DatabaseTrouble) throws -> QueueStore? {
        while true {
            let opened = Result { () throws(QueueError) -> QueueStore in try QueueStore(path: options.paths.queueDatabase) }
            switch opened {
            case .success(let store): return store
            case .failure(let error):
                guard error.isTransient else { throw error }
                try trouble.record(error)
                state.withLock { $0.diskFull = trouble.diskFull }
            }
            if state.withLock({ $0.stopping }) { return nil }
            _ = doorbell.wait(timeout: .now() + (trouble.delay ?? 1))
        }
    }

    /// One look at the queue: record what finished, act on cancellations and gates, start
    /// what may start; all of it in one commit (see `AfterCommit`). A card of small photos
    /// runs a pass for nearly every photo, and a commit each for its completion and for the
    /// next row's start cost more than the two writes. An outcome the database refused is
    /// kept for the next pass, and the pass fails once the rest is committed.
    ///
    /// Returns when the next retrying row is due, read in the same transaction.
    private func pass(_ store: QueueStore, stopping: Bool) throws -> Int64? {
        var refused: Error?
        var nextRetry: Int64?
        try AfterCommit.transaction(on: store.database) { after in
            // Renames the folder watchers saw reach rows in progress here, before any outcome
            // is recorded, so a row completes under the name its file has now.
            try store.applyRequestedMoves()
            refused = recordFinished(store, &after)
            guard !stopping, refused == nil else { return }
            try handleCancellations(store)
            try applyPersonsPause(store)
            try applyPause(store, &after)
            let now = nowMilliseconds()
            try dispatch(store, &after)
            nextRetry = try store.nextRetryTime(after: now)
        }
        if let refused { throw refused }
        guard !stopping else { return nextRetry }
        writeProgress(store)
        recordBatch(store)
        return nextRetry
    }

    /// Nothing left that moves by itself: rows the person paused wait for the person.
    /// What is on its way is asked before the queue: what arrived before the answer is in
    /// the queue by then. Waiting for it with nothing else left to do is said (`ArrivalWait`).
    private func isIdle(_ store: QueueStore) -> Bool {
        let arriving = options.arriving?()
        let quiet = state.withLock { $0.running.isEmpty && $0.finished.isEmpty && $0.unapplied.isEmpty && $0.cancelling.isEmpty }
        let queueDone = quiet && ((try? store.isQueuePaused() || store.isIdle(countingPaused: false)) ?? false)
        let now = MonotonicClock.seconds()
        if state.withLock({ $0.arrivalWait.isDue(waiting: queueDone && arriving != nil, now: now) }), let arriving {
            Log.info("nothing is left in the queue; before exiting, waiting for what is still arriving: \(arriving)")
        }
        return queueDone && arriving == nil
    }

    func handle(_ request: String) -> String {
        switch request {
        case "ping": return "pong \(getpid())"
        case "stop":
            Log.info("asked to stop (instant-upload stop): transfers end at their last checkpoint")
            stop()
            return "stopping \(getpid())"
        case "pause":
            // Straight from the agent: a full disk cannot be written to the database.
            return state.withLock { $0.pause }.map { "paused \($0.rawValue)" } ?? "running"
        default:
            // Someone outside changed something: a keyring may have been unlocked too.
            passwords.askAgainSoon()
            options.onDoorbell?()
            wake()
            return "ok"
        }
    }

    // MARK: Waiting

    /// How long a failure may wait for others to be told with it.
    static let attentionDelay = 3.0

    private func wait(_ store: QueueStore, trouble: Double?, nextRetry: Int64?) {
        var seconds = state.withLock { $0.pendingFailed.isEmpty } ? 5.0 : 0.5
        if let trouble {
            seconds = trouble
        } else if let next = nextRetry {
            seconds = min(seconds, max(0.01, Double(next - nowMilliseconds()) / 1000))
        }
        if let until = accountsHeldUntil() { seconds = min(seconds, max(0.01, Double(until - nowMilliseconds()) / 1000)) }
        // A file that settles and is passed over queues nothing and rings nobody.
        if options.exitWhenIdle, options.arriving?() != nil { seconds = min(seconds, 0.25) }
        // A password or status page due again is asked by the pass that meets its account's
        // rows; one overdue after a pass is one no pass asks now (no network, the queue
        // paused, the account's rows gone), and waking for it would wake every 10 ms.
        if let ask = passwords.secondsUntilNextAsk, ask > 0 { seconds = min(seconds, max(0.01, ask)) }
        if let check = maintenance.secondsUntilNextCheck, check > 0 { seconds = min(seconds, max(0.01, check)) }
        // While transfers run, their progress is written a few times a second between passes,
        // and the batch's rate sampled every second.
        let deadline = MonotonicClock.seconds() + seconds
        while true {
            let left = deadline - MonotonicClock.seconds()
            if left <= 0 { break }
            let sampling = trouble == nil && state.withLock { !$0.running.isEmpty || $0.batch.rateWritten }
            if doorbell.wait(timeout: .now() + (sampling ? min(left, options.settings.progressInterval) : left)) == .success { break }
            if sampling {
                writeProgress(store)
                recordBatch(store)
            }
        }
        while doorbell.wait(timeout: .now()) == .success {}
    }

    /// Writes a change of the whole queue's pause to the rows once: every waiting row says
    /// why (retrying ones go back to queued), and the pause is recorded for `status`; when
    /// it lifts, those notes are cleared. (A full disk is told by the agent itself.)
    private func applyPause(_ store: QueueStore, _ after: inout AfterCommit) throws {
        let (wanted, applied) = state.withLock { ($0.recordedPause, $0.appliedPause) }
        guard wanted != applied else { return }
        if let applied { try store.clearWaiting(code: applied) }
        if let wanted {
            // Without a network a server on this machine is still reached (takesWork).
            let local = wanted == .offline ? Set(try store.accounts().filter(\.isOnThisMachine).map(\.id)) : []
            try store.pauseAllWaiting(reason: wanted == .paused ? .queuePaused : Reason(wanted), sparing: local)
        }
        try store.setAgentValue("paused_reason", wanted?.rawValue)
        after.onCommit { [self] in state.withLock { $0.appliedPause = wanted } }
    }
}
