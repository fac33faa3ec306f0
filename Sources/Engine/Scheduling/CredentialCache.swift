import Platform
import Queue
import Transport

/// What looking up an account's password found.
public enum CredentialLookup: Sendable, Equatable {
    case found(Credentials)
    /// Nowhere: not in the keyring (which answered) and not in the credentials file.
    case notStored
    /// Cannot be known right now (keyring locked, or not started yet); the words say which.
    case unavailable(String)
}

/// Account passwords as the agent knows them: looked up once per account and kept in
/// memory, never asked for once per transfer. A lookup runs on a thread of its own, so a
/// slow keyring never holds up the scheduler; one that cannot answer now is asked again
/// every `retryInterval` seconds and whenever someone rings the doorbell.
///
/// A password is kept for the account as it was when it was read: an account saved again
/// under the same name (another server, another user) or removed and added again (its id
/// given out anew) is asked for again, so a password never goes to an address it was not
/// read for.
final class CredentialCache: Sendable {
    enum Entry: Sendable, Equatable {
        case ready(Credentials)
        case asking
        case unavailable(String, askAgainAt: Double)
        /// The keyring answered that it has none, and the file has none: a person has to add
        /// it (asked again all the same, so it is found soon after they do).
        case missing(askAgainAt: Double)
    }

    static let retryInterval = 10.0

    private let lookup: @Sendable (Account) -> CredentialLookup
    private let entries = Locked<[Int64: (account: Account, entry: Entry)]>([:])
    /// Why each account's password could not be read when last asked, so the log says it once.
    private let told = Locked<[Int64: String]>([:])

    init(lookup: @escaping @Sendable (Account) -> CredentialLookup) {
        self.lookup = lookup
    }

    /// Where `account` stands, without waiting: an unknown (or due) account starts a lookup
    /// on its own thread and is `asking` until `answered` is called.
    func entry(for account: Account, answered: @escaping @Sendable () -> Void) -> Entry {
        let now = MonotonicClock.seconds()
        let (entry, ask) = entries.withLock { e -> (Entry, Bool) in
            let known = e[account.id].flatMap { $0.account == account ? $0.entry : nil }
            let due: Bool = switch known {
            case .none: true
            case .unavailable(_, let at), .missing(let at): at <= now
            case .ready, .asking: false
            }
            if let known, !due { return (known, false) }
            e[account.id] = (account, .asking)
            return (.asking, true)
        }
        if ask {
            let running = DedicatedThread.startDetached(name: "password-\(account.id)") { [self] in
                record(lookup(account), for: account)
                answered()
            }
            // Not asking after all: a later pass asks again.
            if !running { entries.withLock { _ = $0.removeValue(forKey: account.id) } }
        }
        return entry
    }

    /// The password now, looking it up on the caller's thread when it is not known (for
    /// work that may wait, such as ending a cancelled upload on the server).
    func credentialsNow(for account: Account) -> Credentials? {
        if let known = entries.withLock({ $0[account.id] }), known.account == account, case .ready(let credentials) = known.entry {
            return credentials
        }
        return record(lookup(account), for: account)
    }

    @discardableResult
    private func record(_ result: CredentialLookup, for account: Account) -> Credentials? {
        let entry: Entry
        switch result {
        case .found(let credentials):
            entry = .ready(credentials)
        case .notStored:
            entry = .missing(askAgainAt: MonotonicClock.seconds() + Self.retryInterval)
        case .unavailable(let why):
            entry = .unavailable(why, askAgainAt: MonotonicClock.seconds() + Self.retryInterval)
        }
        entries.withLock { $0[account.id] = (account, entry) }
        let said: String? = switch result {
        case .found: nil
        case .notStored: "no password is stored for it"
        case .unavailable(let why): why
        }
        let previous = told.withLock { t in
            defer { t[account.id] = said }
            return t[account.id]
        }
        if let why = said, previous != why {
            // Said once per change, not every time it is asked again.
            Log.info("the password of \(DisplayText.escape(account.name)) cannot be read now (\(why)); its transfers wait and it is asked for again every \(Int(Self.retryInterval)) s")
        }
        if case .ready(let credentials) = entry { return credentials }
        return nil
    }

    /// The server refused the password: the next transfer reads it again, so a password
    /// changed with `account add` is picked up.
    func forget(accountID: Int64) {
        entries.withLock { e in
            if e[accountID]?.entry != .asking { e[accountID] = nil }
        }
    }

    /// Someone rang the doorbell (a keyring may just have been unlocked, an account added):
    /// passwords that could not be read, or were not stored, are asked for again.
    func askAgainSoon() {
        entries.withLock { e in
            for (id, known) in e {
                switch known.entry {
                case .unavailable, .missing: e[id] = nil
                case .ready, .asking: break
                }
            }
        }
    }

    /// Seconds until the next account that could not be read is due to be asked again.
    var secondsUntilNextAsk: Double? {
        let now = MonotonicClock.seconds()
        return entries.withLock { e in
            e.values.compactMap { known -> Double? in
                switch known.entry {
                case .unavailable(_, let at), .missing(let at): max(0, at - now)
                case .ready, .asking: nil
                }
            }.min()
        }
    }
}
