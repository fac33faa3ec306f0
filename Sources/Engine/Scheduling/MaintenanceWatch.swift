import Glibc
import Platform
import Queue
import Transport

/// Nextcloud and ownCloud tell in `status.php` (no login needed) when their administrator
/// has them in maintenance mode. The agent asks there instead of sending transfers into
/// 503s: once before the first transfer to such an account, again whenever a transfer
/// meets a 503, and, while the server is in maintenance, every `firstInterval` seconds
/// and then less often (up to `maxInterval`). Meanwhile the account takes no work and its
/// rows say `maintenance`; nothing fails, and they start by themselves when it ends.
///
/// A question runs on a thread of its own, so a slow server never holds up the scheduler.
final class MaintenanceWatch: Sendable {
    enum Entry: Sendable, Equatable {
        case asking
        case open
        /// In maintenance: what the rows say, and when (monotonic seconds) to ask again.
        case maintenance(Reason, askAgainAt: Double, interval: Double)
    }

    enum Verdict: Equatable {
        case go
        /// Hold the account's rows; with a reason to show when it is news to them.
        case hold(Reason?)
    }

    let firstInterval: Double
    let maxInterval: Double

    private let entries = Locked<[Int64: Entry]>([:])
    /// Accounts whose maintenance ended since `takeEnded` was last called.
    private let ended = Locked<Set<Int64>>([])
    private let ask: @Sendable (Account) throws -> ServerStatus?

    /// `ask` reads the account's status.php (nil when it is no Nextcloud/ownCloud status).
    init(firstInterval: Double = 10, maxInterval: Double = 60, ask: @escaping @Sendable (Account) throws -> ServerStatus?) {
        self.firstInterval = firstInterval
        self.maxInterval = maxInterval
        self.ask = ask
    }

    /// The real question: GET status.php at the account's address, set up as every request
    /// to that server is (its CA file), without credentials.
    static func statusPage(settings: TransferSettings) -> @Sendable (Account) throws -> ServerStatus? {
        { account in
            guard let base = account.server.baseURL else { return nil }
            let discovery = try ServerDiscovery(address: base, credentials: nil)
            settings.prepare(discovery.session, for: account)
            return try discovery.status()
        }
    }

    /// Whether `account` may take work now. Accounts without a status page always may.
    func verdict(for account: Account, answered: @escaping @Sendable () -> Void) -> Verdict {
        guard account.server.hasStatusPage else { return .go }
        let now = MonotonicClock.seconds()
        let (verdict, due) = entries.withLock { e -> (Verdict, Bool) in
            switch e[account.id] {
            case .none:
                e[account.id] = .asking
                return (.hold(nil), true)
            case .asking:
                return (.hold(nil), false)
            case .open:
                return (.go, false)
            case .maintenance(let reason, let at, let interval):
                guard at <= now else { return (.hold(reason), false) }
                // Asked again before the rows go: they keep their note meanwhile.
                e[account.id] = .maintenance(reason, askAgainAt: .infinity, interval: interval)
                return (.hold(reason), true)
            }
        }
        if due { check(account, answered: answered) }
        return verdict
    }

    /// A transfer met a 503: ask status.php whether that is maintenance mode (held), or
    /// something else the backoff deals with (not held).
    func serverUnavailable(_ account: Account, answered: @escaping @Sendable () -> Void) {
        guard account.server.hasStatusPage else { return }
        let due = entries.withLock { e -> Bool in
            switch e[account.id] {
            case .asking, .maintenance: return false
            case .none, .open:
                e[account.id] = .asking
                return true
            }
        }
        if due { check(account, answered: answered) }
    }

    /// The accounts whose maintenance ended since the last call: their rows' notes go.
    func takeEnded() -> Set<Int64> {
        ended.withLock { e in
            defer { e.removeAll() }
            return e
        }
    }

    /// Takes back accounts `takeEnded` gave out whose rows' notes could not be cleared.
    func giveBackEnded(_ accounts: Set<Int64>) {
        ended.withLock { $0.formUnion(accounts) }
    }

    /// Seconds until the next account in maintenance is due to be asked again.
    var secondsUntilNextCheck: Double? {
        let now = MonotonicClock.seconds()
        return entries.withLock { e in
            e.values.compactMap { entry -> Double? in
                if case .maintenance(_, let at, _) = entry, at.isFinite { return max(0, at - now) }
                return nil
            }.min()
        }
    }

    private func check(_ account: Account, answered: @escaping @Sendable () -> Void) {
        let running = DedicatedThread.startDetached(name: "status-\(account.id)") { [self] in
            record(Result { try ask(account) }, for: account)
            answered()
        }
        if !running { record(.failure(SystemError("pthread_create", errno: EAGAIN)), for: account) }
    }

    private func record(_ result: Result<ServerStatus?, Error>, for account: Account) {
        let now = MonotonicClock.seconds()
        let name = DisplayText.escape(account.name)
        entries.withLock { e in
            let previous = e[account.id]
            switch result {
            case .success(let status?) where status.maintenance:
                var interval = firstInterval
                if case .maintenance(_, _, let last) = previous { interval = min(maxInterval, last * 1.5) }
                else { Log.info("\(status.product) of \(name) is in maintenance mode; its transfers wait until it ends") }
                let reason = Reason(.maintenance, "\(status.product) is in maintenance mode; the transfers start by themselves when it ends",
                                    action: "nothing to do: it is asked again every minute or so")
                e[account.id] = .maintenance(reason, askAgainAt: now + interval, interval: interval)
            case .success:
                if case .maintenance = previous {
                    Log.info("the server of \(name) is out of maintenance mode; its transfers go on")
                    ended.withLock { _ = $0.insert(account.id) }
                }
                e[account.id] = .open
            case .failure(let error):
                if case .maintenance(let reason, _, let interval) = previous {
                    // No answer is no news: it stays held and is asked again later.
                    e[account.id] = .maintenance(reason, askAgainAt: now + interval, interval: interval)
                } else {
                    // The transfers themselves will say what is wrong with the server.
                    Log.debug("status.php of \(name) did not answer (\(error)); its transfers go ahead")
                    e[account.id] = .open
                }
            }
        }
    }
}
