import Platform
import Queue
import Transport

/// Starting transfers: budgets per direction, lanes, and meeting the gates that hold some
/// rows back (`Agent+Gates.swift`).
extension Agent {
    /// Inside the pass's transaction: a started row's thread begins once it is committed.
    func dispatch(_ store: QueueStore, _ after: inout AfterCommit) throws {
        let (online, diskFull, pausedByYou) = state.withLock { ($0.online, $0.diskFull, $0.pausedByYou) }
        guard !diskFull, !pausedByYou else { return }
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
        let ended = maintenance.takeEnded()
        for id in ended { try store.clearWaiting(code: .maintenance, accountID: id) }
        if !ended.isEmpty { after.onRollback { [self] in maintenance.giveBackEnded(ended) } }
        // Accounts that take no new work in this pass (any direction), and what their rows
        // should say when it is news to them (a busy server's rows already say so).
        var heldAccounts: Set<Int64> = []
        var notes: [Int64: Reason] = [:]
        // Held accounts whose server cannot take work for a while (unreachable, failing, busy
        // for the time it asked), what their rows say, and until when.
        var waitingAccounts: [Int64: (reason: Reason, until: Int64)] = [:]
        // What each watch rule says in this pass; each asked once.
        var ruleAnswers: [RuleOfAccount: Reason?] = [:]
        func ruleHold(_ rule: String, _ account: Account) -> Reason? {
            let key = RuleOfAccount(rule: rule, account: account.id)
            if let answer = ruleAnswers[key] { return answer }
            let answer = options.ruleHold.map { $0(rule, account) } ?? (account.wifiOnly && !wifiOK() ? Reason(.wifi) : nil)
            ruleAnswers[key] = answer
            return answer
        }
        try reviewHolds(store, accounts: accounts, online: online, now: now, ruleHold: ruleHold, wifiOK: wifiOK)
        for direction in Direction.allCases {
            let slots = direction == .upload ? options.uploadSlots : options.downloadSlots
            var skipped = state.withLock { s in Set(s.running.filter { $0.value.direction == direction }.keys) }
            var free = slots - skipped.count
            // Once every account is held, nothing can start: the query would read every waiting
            // row (all of them behind a held account) to find none, at each pass, however long
            // the backlog (no network, a password still being read, a server in maintenance).
            while free > 0, !accounts.keys.allSatisfy(heldAccounts.contains) {
                // As many rows as there are free slots: a row held back ends this query's
                // look (its rule's rows are held at once and its account is left out of the
                // next query, so held rows never hide the ones behind them), and a small
                // photo's pass would otherwise read and decode rows it never starts.
                let limit = free
                let rows = try store.runnable(direction: direction, now: now, limit: limit, excluding: skipped,
                                              excludingAccounts: heldAccounts)
                var lookedAtAll = true
                for row in rows where free > 0 {
                    skipped.insert(row.id)
                    guard let account = accounts[row.accountID] else { continue }
                    if !takesWork(account, now: now, online: online) {
                        heldAccounts.insert(account.id)
                        // Held only by its limit of transfers at once, it waits for one of them.
                        if let waiting = waiting(account.id, now: now) { waitingAccounts[account.id] = waiting }
                        lookedAtAll = false
                        break // the next query leaves this account out
                    }
                    if case .hold(let note) = maintenance.verdict(for: account, answered: { [self] in wake() }) {
                        heldAccounts.insert(account.id)
                        notes[account.id] = note
                        lookedAtAll = false
                        break
                    }
                    // Watch rules (and the account-wide Wi-Fi flag) hold auto-uploads; what a
                    // person asked for by hand goes (the same rows as QueueStore.HoldScope).
                    // Their rows are held at once, so the next query no longer finds them.
                    if row.origin == .auto, !row.ignoreRules {
                        let gate: (QueueStore.HoldScope, Reason)? = if let rule = row.watchRule {
                            ruleHold(rule, account).map { (.rule(rule, account: account.id), $0) }
                        } else {
                            account.wifiOnly && !wifiOK() ? (.wifiFlag(account: account.id), Reason(.wifi)) : nil
                        }
                        if let (scope, reason) = gate {
                            try store.hold(scope, reason: reason)
                            lookedAtAll = false
                            break
                        }
                    }
                    let password = passwords.entry(for: account) { [self] in wake() }
                    guard case .ready(let credentials) = password else {
                        heldAccounts.insert(account.id)
                        notes[account.id] = Self.note(for: password, of: account)
                        lookedAtAll = false
                        break
                    }
                    if try launch(row, account: account, credentials: credentials, store: store, &after) { free -= 1 }
                }
                if lookedAtAll && rows.count < limit { break }
            }
        }
        // The accounts met held in this pass hold their rows from now on (`QueueStore+Hold.swift`).
        for (id, note) in notes.sorted(by: { $0.key < $1.key }) { try store.hold(.account(id), reason: note) }
        // Their rows are held, so that the query does not read past them for the other
        // accounts while the wait lasts; the rows that failed stay retrying (they try the
        // server again), but not before the wait ends.
        for (id, waiting) in waitingAccounts.sorted(by: { $0.key < $1.key }) {
            try store.hold(.account(id), reason: waiting.reason, dueRetrying: .postponed(until: waiting.until))
        }
    }

    /// Moves the row to `in_progress` and, once that is committed, runs its job on a thread
    /// of its own. False when the row was gone or changed meanwhile.
    private func launch(_ row: Transfer, account: Account, credentials: Credentials, store: QueueStore,
                        _ after: inout AfterCommit) throws -> Bool {
        guard let started = try store.start(row, resumedAt: row.checkpoint.offset) else { return false }
        let cancellation = CancellationFlag()
        let progress = TransferProgress(started.bytesDone)
        // Counted at once against its slot and its account's limit, for the rest of this pass.
        state.withLock { s in
            s.running[row.id] = Running(direction: row.direction, accountID: row.accountID, isManual: row.origin != .auto,
                                        cancellation: cancellation, progress: progress, progressWritten: started.bytesDone)
            // Asked to stop, or the network gone, while this pass ran: it stops as the
            // transfers running then did, at once, and goes back to waiting.
            if s.stopping {
                _ = s.stopRunning(row.id, because: .shutdown)
            } else if !s.online, !account.isOnThisMachine {
                _ = s.stopRunning(row.id, because: .offline)
            }
        }
        after.onRollback { [self] in state.withLock { _ = $0.running.removeValue(forKey: row.id) } }
        after.onCommit { [self] in
            state.withLock { $0.batch.throughput.started(row.id, at: started.bytesDone) }
            runJob(started, account: account, credentials: credentials, store: store, cancellation: cancellation, progress: progress)
        }
        return true
    }

    /// Runs a started row's job on a thread of its own, on the scheduler's connection (whose
    /// page cache then stays warm for both); its outcome comes back through `finished`.
    private func runJob(_ row: Transfer, account: Account, credentials: Credentials, store: QueueStore,
                        cancellation: CancellationFlag, progress: TransferProgress) {
        let options = self.options
        let settings = {
            var s = options.settings
            s.progress = progress
            s.proofNeeded = row.direction == .upload && options.needsProof?(row) == true
            return s
        }()
        let serverInfo = self.serverInfo
        let transfer = row
        Log.debug("starting \(row.direction.rawValue) \(row.id): \(row.name)")
        let running = transferThreads.run(name: "transfer-\(row.id)") { [self] in
            let outcome: JobOutcome
            do {
                switch transfer.direction {
                case .upload:
                    outcome = try UploadJob(transfer: transfer, account: account, credentials: credentials, store: store,
                                        settings: settings, serverInfo: serverInfo, cancellation: cancellation).run()
                case .download:
                    outcome = DownloadJob(transfer: transfer, account: account, credentials: credentials, store: store,
                                          settings: settings, downloads: options.paths.localDrive, cancellation: cancellation,
                                          placed: options.onDownloadPlaced).run()
                }
            } catch {
                // The job could not begin (an account it cannot use).
                let c = FailureClassifier.classify(error)
                outcome = c.isTransient ? .retry(c, progressed: false) : .failed(c.reason)
            }
            finished(transfer.id, followingItsRename(waitingForItsFolder(outcome, of: transfer), of: transfer))
        }
        if !running {
            // Nothing runs it: recorded as ended now, it waits its backoff and is tried again,
            // rather than holding its slot as in progress until the agent restarts.
            finished(transfer.id, .retry(Classification(reason: Reason(.noResources)), progressed: false))
        }
    }
}
