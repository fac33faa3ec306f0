import Dispatch
import Foundation
import Glibc
import Platform
import Queue
import Synchronization
import Transport

/// The long-lived agent: takes rows from the queue, runs transfers within their budgets,
/// and is the only one to move a row out of `in_progress`.
///
/// Concurrency in a sentence: the scheduling loop runs on the thread that called `run()`
/// and owns all row transitions; each transfer runs on a thread of its own with its own
/// database connection and reports its outcome back through `finished`, which wakes the loop.
public final class Agent: Sendable {
    public struct Options: Sendable {
        public var paths: XDGPaths
        public var uploadSlots = 3
        public var downloadSlots = 3
        public var settings = TransferSettings()
        public var backoff = Backoff()
        /// Stop by itself once no row is queued, running or retrying.
        public var exitWhenIdle = false
        /// Told once per batch of rows that just failed and need the person.
        public var onAttention: (@Sendable ([Transfer]) -> Void)?
        /// Told when the last of the work a person asked for by hand is done.
        public var onBatchDone: (@Sendable ([Transfer]) -> Void)?
        /// Whether a row held by a Wi-Fi-only rule may go now (asked at dispatch, so a
        /// changed rule or network applies to rows already queued).
        public var wifiGate: (@Sendable () -> Bool)?
        /// Looks up an account's password (Secret Service or the credentials file).
        public var credentials: @Sendable (Account) -> Credentials?

        public init(paths: XDGPaths, credentials: @escaping @Sendable (Account) -> Credentials?) {
            self.paths = paths
            self.credentials = credentials
        }
    }

    /// Why a running transfer is being stopped from outside.
    enum StopCause: Sendable { case cancel, shutdown, offline }

    struct Running: Sendable {
        var direction: Direction
        var accountID: Int64
        var cancellation: CancellationFlag
        var stopCause: StopCause?
    }

    /// How hard an account's server may be pushed right now. A 423/429/503 halves what
    /// is in flight for that account and holds new work until its `Retry-After`; each
    /// completed transfer lets one more in again.
    struct AccountPressure: Sendable {
        var limit: Int
        var holdUntil: Int64 = 0
    }

    struct State: Sendable {
        var running: [Int64: Running] = [:]
        var finished: [(Int64, JobOutcome)] = []
        var stopping = false
        var pressure: [Int64: AccountPressure] = [:]
        /// Hand-made transfers completed since the last "done" notice.
        var manualDone: [Transfer] = []
        /// Failures not yet told, gathered so that one batch makes one notification.
        var pendingFailed: [Transfer] = []
        var firstPendingAt: Double = 0
        /// The whole queue's gate: false while there is no usable default route.
        var online = true
        /// The gate as the rows last saw it, so the change is written once.
        var appliedOnline = true
    }

    let options: Options
    let state = Mutex(State())
    let doorbell = DispatchSemaphore(value: 0)
    let serverInfo = ServerInfoCache()

    public init(options: Options) {
        self.options = options
    }

    /// Wakes the scheduling loop: something changed in the database or in the world.
    public func wake() { doorbell.signal() }

    /// The connectivity monitor's verdict. Going offline stops in-flight transfers at their
    /// last checkpoint (nothing fails, no attempt is counted); coming back resumes.
    public func networkChanged(online: Bool) {
        let changed = state.withLock { s -> Bool in
            guard s.online != online else { return false }
            s.online = online
            if !online {
                for id in s.running.keys where s.running[id]!.stopCause == nil {
                    s.running[id]!.stopCause = .offline
                    s.running[id]!.cancellation.cancel()
                }
            }
            return true
        }
        if changed {
            Log.info(online ? "network is back: resuming the queue" : "network is gone: the queue waits for it")
            wake()
        }
    }

    /// Asks the agent to stop: transfers end at their last checkpoint, rows go back to queued.
    public func stop() {
        state.withLock { s in
            s.stopping = true
            for id in s.running.keys { s.running[id]!.stopCause = s.running[id]!.stopCause ?? .shutdown; s.running[id]!.cancellation.cancel() }
        }
        wake()
    }

    /// Runs until `stop()`. Throws when another agent already runs or the queue can't be opened.
    public func run() throws {
        let lock = try InstanceLock(path: options.paths.agentLock)
        let store = try QueueStore(path: options.paths.queueDatabase)
        let recovered = try store.recoverAbandoned()
        if recovered > 0 { Log.info("took back \(recovered) transfer(s) left running by a previous agent; they resume from their checkpoints") }
        let socket = try ControlSocketServer(path: options.paths.controlSocket) { [self] request in
            handle(request)
        }
        socket.start()
        defer { socket.close(); withExtendedLifetime(lock) {} }
        Log.info("agent started; queue \(options.paths.queueDatabase)")
        try store.setAgentValue("paused_reason", nil)

        while true {
            try applyFinished(store)
            let stopping = state.withLock { $0.stopping }
            if stopping {
                if state.withLock({ $0.running.isEmpty }) { break }
            } else {
                try handleCancellations(store)
                try applyNetworkGate(store)
                try dispatch(store)
                if options.exitWhenIdle, state.withLock({ $0.running.isEmpty && $0.finished.isEmpty }), try store.isIdle() { break }
            }
            wait(store)
        }
        try applyFinished(store)
        Log.info("agent stopped")
    }

    func handle(_ request: String) -> String {
        switch request {
        case "ping": return "pong \(getpid())"
        default:
            wake()
            return "ok"
        }
    }

    // MARK: The loop's steps

    /// How long a failure may wait for others to be told with it.
    static let attentionDelay = 3.0

    private func wait(_ store: QueueStore) {
        var seconds = state.withLock { $0.pendingFailed.isEmpty } ? 5.0 : 0.5
        if let next = try? store.nextRetryTime() {
            seconds = min(seconds, max(0.01, Double(next - nowMilliseconds()) / 1000))
        }
        _ = doorbell.wait(timeout: .now() + seconds)
        while doorbell.wait(timeout: .now()) == .success {}
    }

    /// Writes a change of the network gate to the rows once: every waiting row says
    /// "waiting for network" (retrying ones go back to queued), and the pause is recorded
    /// for `status`; when the network returns, those notes are cleared.
    private func applyNetworkGate(_ store: QueueStore) throws {
        let (online, applied) = state.withLock { ($0.online, $0.appliedOnline) }
        guard online != applied else { return }
        if online {
            try store.clearWaiting(code: .offline)
            try store.setAgentValue("paused_reason", nil)
        } else {
            try store.pauseAllWaiting(reason: Reason(.offline))
            try store.setAgentValue("paused_reason", ReasonCode.offline.rawValue)
        }
        state.withLock { $0.appliedOnline = online }
    }

    private func dispatch(_ store: QueueStore) throws {
        let online = state.withLock { $0.online }
        let now = nowMilliseconds()
        // Asked only when a held row comes up, and then once per pass.
        var wifiAnswer: Bool?
        func wifiOK() -> Bool {
            if let wifiAnswer { return wifiAnswer }
            let answer = options.wifiGate?() ?? true
            wifiAnswer = answer
            return answer
        }
        let accounts = Dictionary(uniqueKeysWithValues: try store.accounts().map { ($0.id, $0) })
        for direction in Direction.allCases {
            let slots = direction == .upload ? options.uploadSlots : options.downloadSlots
            let busy = state.withLock { s in Set(s.running.filter { $0.value.direction == direction }.keys) }
            let free = slots - busy.count
            guard free > 0 else { continue }
            // Look a little further than the free slots, past rows of accounts held back.
            var started = 0
            var held: [Int64] = []
            defer { if !held.isEmpty { try? store.setWaiting(held, reason: Reason(.wifi)) } }
            for row in try store.runnable(direction: direction, now: now, limit: free * 4 + 200, excluding: busy) where started < free {
                guard mayStart(accountID: row.accountID, now: now, slots: slots) else { continue }
                guard let account = accounts[row.accountID] else { continue }
                // Without a network only a server on this machine can be reached.
                guard online || account.isOnThisMachine else { continue }
                // Wi-Fi-only rules hold auto-uploads; what a person asked for by hand goes.
                if row.origin == .auto, account.wifiOnly, !row.ignoreRules, !wifiOK() {
                    if row.reason?.code != .wifi { held.append(row.id) }
                    continue
                }
                try launch(row, account: account, store: store)
                started += 1
            }
        }
    }

    private func mayStart(accountID: Int64, now: Int64, slots: Int) -> Bool {
        state.withLock { s in
            guard let p = s.pressure[accountID] else { return true }
            if p.holdUntil > now { return false }
            let inFlight = s.running.values.filter { $0.accountID == accountID }.count
            return inFlight < p.limit
        }
    }

    /// The server said it is busy: fewer in flight for this account, and a pause.
    private func easeOff(accountID: Int64, retryAfter: Double?) {
        state.withLock { s in
            let inFlight = s.running.values.filter { $0.accountID == accountID }.count + 1
            var p = s.pressure[accountID] ?? AccountPressure(limit: max(options.uploadSlots, options.downloadSlots))
            p.limit = max(1, min(p.limit, inFlight) / 2)
            p.holdUntil = max(p.holdUntil, nowMilliseconds() + Int64((retryAfter ?? 1) * 1000))
            s.pressure[accountID] = p
        }
    }

    private func recovered(accountID: Int64) {
        state.withLock { s in
            guard var p = s.pressure[accountID] else { return }
            p.limit += 1
            if p.limit >= max(options.uploadSlots, options.downloadSlots) { s.pressure[accountID] = nil } else { s.pressure[accountID] = p }
        }
    }

    private func launch(_ row: Transfer, account: Account, store: QueueStore) throws {
        guard let started = try store.start(row.id, resumedAt: row.checkpoint.offset) else { return }
        let cancellation = CancellationFlag()
        state.withLock { $0.running[row.id] = Running(direction: row.direction, accountID: row.accountID, cancellation: cancellation) }
        let options = self.options
        let serverInfo = self.serverInfo
        let path = options.paths.queueDatabase
        let transfer = started
        Log.debug("starting \(row.direction.rawValue) \(row.id): \(row.name)")
        let thread = Thread { [self] in
            let outcome: JobOutcome
            do {
                let jobStore = try QueueStore(path: path)
                let credentials = options.credentials(account)
                switch transfer.direction {
                case .upload:
                    outcome = UploadJob(transfer: transfer, account: account, credentials: credentials, store: jobStore,
                                        settings: options.settings, serverInfo: serverInfo, cancellation: cancellation).run()
                case .download:
                    outcome = DownloadJob(transfer: transfer, account: account, credentials: credentials, store: jobStore,
                                          settings: options.settings, downloads: options.paths.localDrive, cancellation: cancellation).run()
                }
            } catch {
                outcome = .retry(FailureClassifier.classify(error), progressed: false)
            }
            finished(transfer.id, outcome)
        }
        thread.name = "transfer-\(row.id)"
        thread.start()
    }

    private func finished(_ id: Int64, _ outcome: JobOutcome) {
        state.withLock { $0.finished.append((id, outcome)) }
        wake()
    }

    private func applyFinished(_ store: QueueStore) throws {
        let (batch, causes): ([(Int64, JobOutcome)], [Int64: StopCause?]) = state.withLock { s in
            let batch = s.finished
            s.finished.removeAll()
            var causes: [Int64: StopCause?] = [:]
            for (id, _) in batch { causes[id] = s.running.removeValue(forKey: id)?.stopCause }
            return (batch, causes)
        }
        var failed: [Transfer] = []
        for (id, outcome) in batch {
            let cause = causes[id] ?? nil
            do {
                try apply(outcome, to: id, cause: cause, store: store)
                guard let row = try store.transfer(id: id) else { continue }
                if row.state == .failed { failed.append(row) }
                if row.state == .completed, row.origin != .auto { state.withLock { $0.manualDone.append(row) } }
            } catch let e as IllegalTransition {
                Log.error("transfer \(id): \(e)")
            }
        }
        // Failures that come close together are told together: once nothing else is
        // running, or a few seconds after the first.
        let now = monotonicSeconds()
        let tell: [Transfer] = state.withLock { s in
            if !failed.isEmpty {
                if s.pendingFailed.isEmpty { s.firstPendingAt = now }
                s.pendingFailed += failed
            }
            guard !s.pendingFailed.isEmpty, s.running.isEmpty || now - s.firstPendingAt >= Self.attentionDelay else { return [] }
            defer { s.pendingFailed.removeAll() }
            return s.pendingFailed
        }
        if !tell.isEmpty { options.onAttention?(tell) }
        let done = state.withLock { $0.manualDone }
        if !done.isEmpty, try store.activeCount(includeAuto: false) == 0 {
            state.withLock { $0.manualDone.removeAll() }
            options.onBatchDone?(done)
        }
    }

    private func apply(_ outcome: JobOutcome, to id: Int64, cause: StopCause?, store: QueueStore) throws {
        guard let row = try store.transfer(id: id) else { return }
        if cause == .cancel || row.cancelRequested {
            try finishCancel(row, store: store)
            return
        }
        switch outcome {
        case .completed(let sha, let bytes):
            try store.complete(id, sha256: sha, bytes: bytes)
            recovered(accountID: row.accountID)
            Log.info("\(row.direction == .upload ? "uploaded" : "downloaded") \(row.name) -> \(row.direction == .upload ? "\(row.accountName):\(row.remotePath)" : row.localPath.display)")
        case .failed(let reason):
            try store.fail(id, reason: reason)
            Log.warning("\(row.name): \(reason.message)")
        case .retry(let classification, let progressed):
            if [.serverBusy, .maintenance].contains(classification.reason.code) {
                easeOff(accountID: row.accountID, retryAfter: classification.retryAfter)
            }
            let attempts = progressed ? 1 : row.attempts + 1
            let (delay, reason) = options.backoff.wait(after: classification, attempt: attempts)
            let at = nowMilliseconds() + Int64(delay * 1000)
            try store.retryLater(id, reason: reason, at: at, attempts: attempts)
            Log.info("\(row.name): \(reason.message); retrying in \(String(format: "%.1f", delay)) s (attempt \(attempts))")
        case .stopped:
            try store.requeue(id, reason: cause == .offline ? Reason(.offline) : nil)
        }
    }

    // MARK: Cancellation

    private func handleCancellations(_ store: QueueStore) throws {
        for row in try store.cancelRequested() {
            let isRunning = state.withLock { s -> Bool in
                guard s.running[row.id] != nil else { return false }
                s.running[row.id]!.stopCause = .cancel
                s.running[row.id]!.cancellation.cancel()
                return true
            }
            if !isRunning { try finishCancel(row, store: store) }
        }
    }

    /// Removes a cancelled row, ending its upload on the server and its partial download here.
    private func finishCancel(_ row: Transfer, store: QueueStore) throws {
        if row.direction == .upload, let url = row.uploadURL, let account = try store.account(id: row.accountID) {
            let tus = TusClient(endpoint: account.tusURL, credentials: options.credentials(account))
            options.settings.prepare(tus.session, cancellation: CancellationFlag())
            tus.session.stallSeconds = 5 // a courtesy on the way out: don't wait long for it
            do { try tus.terminate(url) } catch { Log.info("\(row.name): could not end the upload on the server (\(error)); it expires there by itself") }
        }
        if row.direction == .download, row.state != .completed {
            DownloadJob.removePartial(of: row)
        }
        try store.delete(row.id)
        Log.info("cancelled \(row.name)")
    }
}
