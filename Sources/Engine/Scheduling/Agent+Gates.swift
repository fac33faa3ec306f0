import Platform
import Queue
import Transport

/// The gates that hold part of the queue back, as the scheduler sees them: a server that is
/// busy or cannot be reached, an account whose password cannot be read or whose server is in
/// maintenance, a watch rule's Wi-Fi or power setting or its folder not there. The queue
/// keeps which rows a shut gate holds (`QueueStore+Hold.swift`); each pass asks those gates
/// again here.
extension Agent {
    /// The gates that hold rows since an earlier pass: lifted when open, so their rows are
    /// ready in this pass; while shut, their rows say why again where a gate of the whole
    /// queue wrote over it. An account that takes no work now (no network, a busy server)
    /// leaves its gates as they are. `ruleHold` and `wifiOK` are the pass's own answers.
    func reviewHolds(_ store: QueueStore, accounts: [Int64: Account], online: Bool, now: Int64,
                     ruleHold: (String, Account) -> Reason?, wifiOK: () -> Bool) throws {
        for scope in try store.heldScopes() {
            guard let account = accounts[scope.accountID] else {
                try store.release(scope)
                continue
            }
            // Without a network the whole queue's gate says why, and nothing is tried.
            if !online && !account.isOnThisMachine { continue }
            let free = takesWork(account, now: now, online: online)
            if case .account = scope, let note = heldNote(account.id) {
                // Its rows wait until the server answers again, or takes work again after the
                // wait it asked for; each time the wait ends, one of them tries it beside the
                // failed ones, so the account never depends on rows the person may cancel.
                // A completion lifts the rest at once (`recovered`); lifting them all when the
                // wait ends would write every row twice for each wait, only to hold them again.
                if free { try store.releaseOne(scope) }
                try store.restate(scope, reason: note)
                continue
            }
            guard free else { continue }
            let gate: Gate
            switch scope {
            case .rule(let rule, _):
                gate = ruleHold(rule, account).map(Gate.shut) ?? .open
            case .wifiFlag:
                gate = account.wifiOnly && !wifiOK() ? .shut(Reason(.wifi)) : .open
            case .account:
                gate = accountGate(account)
            }
            switch gate {
            case .open: try store.release(scope)
            case .shut(let reason): try store.restate(scope, reason: reason)
            case .unknown: break
            }
        }
    }

    /// A watch rule of one account: rules of the same name may hold rows of other accounts.
    struct RuleOfAccount: Hashable {
        let rule: String
        let account: Int64
    }

    /// What a gate that holds rows says in this pass: `unknown` while its answer is being
    /// asked (a password being read, a status page being fetched), when it stays as it is.
    enum Gate {
        case open
        case shut(Reason)
        case unknown
    }

    /// Whether an account's own gates are open: its server's maintenance, and its password.
    private func accountGate(_ account: Account) -> Gate {
        if case .hold(let note) = maintenance.verdict(for: account, answered: { [self] in wake() }) {
            return note.map(Gate.shut) ?? .unknown
        }
        let password = passwords.entry(for: account) { [self] in wake() }
        if case .ready = password { return .open }
        return Self.note(for: password, of: account).map(Gate.shut) ?? .unknown
    }

    /// False when an account takes no new work now: no network to its server, or the
    /// server asked us to ease off.
    func takesWork(_ account: Account, now: Int64, online: Bool) -> Bool {
        // Without a network only a server on this machine can be reached.
        if !online && !account.isOnThisMachine { return false }
        return state.withLock { s in
            let pressure = s.pressure[account.id]
            if let pressure, pressure.holdUntil > now { return false }
            let limit = min(pressure?.limit ?? .max, s.bound(account.id, now: now))
            guard limit < .max else { return true }
            return s.running.values.filter { $0.accountID == account.id }.count < limit
        }
    }

    /// What the rows of an account whose password is not ready say: nothing while it is
    /// being looked up; `credentials` while it cannot be read, never `auth`: the server
    /// has not refused anything, and no request goes out without the password.
    static func note(for password: CredentialCache.Entry, of account: Account) -> Reason? {
        switch password {
        case .unavailable(let why, _):
            return Reason(.credentials, detail: why)
        case .missing:
            return Reason(.credentials, "no password is stored for the account \(DisplayText.escape(account.name))",
                          action: "add it again with `instant-upload account add`; the transfers start by themselves then")
        case .ready, .asking:
            return nil
        }
    }

    /// When the first wait of a busy or failing server ends, if one still runs: its due rows
    /// go then (`nextRetryTime` leaves them out).
    func accountsHeldUntil() -> Int64? {
        let now = nowMilliseconds()
        return state.withLock { $0.pressure.values.map(\.holdUntil).filter { $0 > now }.min() }
    }

    /// The server said it is busy (`reason`): fewer in flight for this account, and a pause,
    /// during which its waiting rows say so. A 429 with others in flight also bounds the
    /// account to what the server took (`LearnedBound`).
    func easeOff(accountID: Int64, retryAfter: Double?, reason: Reason) {
        let note = Self.accountNote(reason, then: "the files wait as long as it asked")
        state.withLock { s in
            let now = nowMilliseconds()
            let inFlight = s.running.values.filter { $0.accountID == accountID }.count + 1
            if reason.code == .serverBusy, inFlight > 1 {
                s.bounds[accountID] = LearnedBound(atOnce: min(inFlight - 1, s.bound(accountID, now: now)), until: now + Self.busyBoundKept)
            }
            var p = s.pressure[accountID] ?? AccountPressure(limit: max(options.uploadSlots, options.downloadSlots))
            p.limit = max(1, min(p.limit, inFlight) / 2)
            p.busyUntil = max(p.busyUntil, now + Int64(saturating: (retryAfter ?? 1) * 1000))
            p.busy = note
            s.pressure[accountID] = p
        }
    }

    /// Why an account's server takes no work for now, and until when: down, or busy for
    /// the time it asked.
    func waiting(_ accountID: Int64, now: Int64) -> (reason: Reason, until: Int64)? {
        state.withLock { s in
            guard let p = s.pressure[accountID], p.holdUntil > now, let note = p.note else { return nil }
            return (note, p.holdUntil)
        }
    }

    /// Files of one account failing with a server error in a row, each a different one,
    /// before the server counts as down: one file may upset a server, three in a row say that
    /// every request fails.
    static let serverErrorsBeforeDown = 3

    /// A transfer could not use the account's server: it could not reach it at all, or its
    /// server error makes `serverErrorsBeforeDown` different files in a row. New work for
    /// the account then waits until that transfer's next try (`until`), and its waiting rows
    /// say why, in the failure's first words (what follows is about that one file). A single
    /// server error only counts.
    func serverFailed(accountID: Int64, row: Int64, reason: Reason, until: Int64) {
        state.withLock { s in
            var p = s.pressure[accountID] ?? AccountPressure(limit: max(options.uploadSlots, options.downloadSlots))
            let down: Reason?
            if reason.code == .unreachable {
                down = Self.accountNote(reason, then: "waiting until it answers")
            } else {
                p.failingRows.insert(row)
                down = p.failingRows.count >= Self.serverErrorsBeforeDown
                    ? Self.accountNote(reason, then: "every request fails, so the other files wait until it works again")
                    : nil
            }
            if let down {
                p.downUntil = max(p.downUntil, until)
                p.down = down
            }
            s.pressure[accountID] = p
        }
    }

    /// The server answered with something else to retry: it is not down.
    func reached(accountID: Int64) {
        state.withLock { s in
            guard var p = s.pressure[accountID], p.down != nil || !p.failingRows.isEmpty else { return }
            p.down = nil
            p.failingRows = []
            s.pressure[accountID] = p
        }
    }

    /// What the held rows of an account whose server is down, or asked to wait, say.
    func heldNote(_ accountID: Int64) -> Reason? {
        state.withLock { $0.pressure[accountID]?.note }
    }

    /// What an account's waiting rows say of one file's failure: its first words (what
    /// follows them is about that one file), then `words`.
    static func accountNote(_ reason: Reason, then words: String) -> Reason {
        let sentence = reason.message.split(separator: "; ", maxSplits: 1).first.map(String.init) ?? reason.message
        return Reason(reason.code, sentence + "; " + words, action: reason.action, detail: reason.detail)
    }

    /// A transfer of the account completed: the server works (it is not down), and takes one
    /// more at once; the wait a busy server asked for still runs to its end.
    func recovered(accountID: Int64) {
        let now = nowMilliseconds()
        state.withLock { s in
            guard var p = s.pressure[accountID] else { return }
            p.down = nil
            p.downUntil = 0
            p.busy = nil
            p.failingRows = []
            p.limit += 1
            let eased = p.limit >= min(max(options.uploadSlots, options.downloadSlots), s.bound(accountID, now: now)) && p.busyUntil <= now
            s.pressure[accountID] = eased ? nil : p
        }
    }
}

extension Agent.State {
    /// How many transfers at once the account's server takes, as far as a 429 showed.
    func bound(_ accountID: Int64, now: Int64) -> Int {
        guard let bound = bounds[accountID], bound.until > now else { return .max }
        return bound.atOnce
    }
}
