import FoundationEssentials
import Glibc
import Platform

/// Nextcloud's Login Flow v2, as its desktop client logs in: the person approves in a
/// browser and the server hands out an app password. The person's own password is never
/// asked for, sent or kept.
///
/// `start()` posts to `/index.php/login/v2`; the person opens `loginURL`; `poll` asks the
/// server until it has the answer. Not Sendable: it owns an `HTTPSession` (without
/// credentials: none are needed, and none exist yet).
public final class LoginFlow {
    /// The server's base address (path prefix included, no trailing slash).
    public let address: String
    public let session: HTTPSession

    public init(address: String) throws(ProtocolViolation) {
        self.address = try ServerDiscovery.normalize(address)
        self.session = HTTPSession(credentials: nil)
    }

    /// A login in progress: where the person logs in, and what to poll.
    public struct Pending: Sendable, Equatable, CustomStringConvertible {
        /// The address to open in a browser.
        public var loginURL: String
        /// Where to poll; on the same server as the address (checked).
        public var pollURL: String
        /// The secret that identifies this login to the poll endpoint; never show it.
        public var token: String
        public var description: String { "login at \(loginURL) (poll token hidden)" }
    }

    /// What an approved login gives.
    public struct Approval: Sendable, Equatable, CustomStringConvertible {
        /// The server as it names itself (informational: requests keep going to `address`).
        public var server: String
        public var loginName: String
        public var appPassword: String
        public var description: String { "\(loginName) at \(server) (app password hidden)" }
    }

    /// Starts a login.
    public func start() throws -> Pending {
        let response = try session.perform(HTTPRequest(method: "POST", url: address + "/index.php/login/v2",
                                                       headers: [("Accept", "application/json")]))
        guard response.status == 200 else { throw HTTPStatusError(step: .login, response: response) }
        let json = try ServerJSON(response.body, source: "the login start reply")
        guard let login = try json.string(["login"], maxLength: 2000), let poll = try json.string(["poll", "endpoint"], maxLength: 2000),
              let token = try json.string(["poll", "token"], maxLength: 1000), !token.isEmpty else {
            throw ProtocolViolation("the server's login start reply lacks the login address, poll endpoint or token")
        }
        // The token goes only to the server the person named; the login address is only opened.
        guard Self.sameOrigin(poll, address) else {
            throw ProtocolViolation("the server wants the login polled at another host (\(Log.redact(url: poll))); refusing")
        }
        guard let loginURL = URL(string: login), ["http", "https"].contains(loginURL.scheme?.lowercased() ?? ""),
              !login.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7f }) else {
            throw ProtocolViolation("the server's login address `\(ServerJSON.shown(login))` is not an http(s) address")
        }
        return Pending(loginURL: login, pollURL: poll, token: token)
    }

    /// Asks once: the approval, or nil while the person has not approved yet (404).
    public func poll(_ pending: Pending) throws -> Approval? {
        let body = "token=" + PercentEncoding.encode(pending.token.utf8)
        let response = try session.perform(HTTPRequest(method: "POST", url: pending.pollURL,
                                                       headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                                                       body: .bytes(Array(body.utf8))))
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw HTTPStatusError(step: .login, response: response) }
        let json = try ServerJSON(response.body, source: "the login result")
        guard let name = try json.string(["loginName"], maxLength: 255), !name.isEmpty,
              let password = try json.string(["appPassword"], maxLength: 1000), !password.isEmpty else {
            throw ProtocolViolation("the server's login result lacks the login name or app password")
        }
        return Approval(server: try json.string(["server"], maxLength: 2000) ?? address, loginName: name, appPassword: password)
    }

    /// Polls every `interval` seconds until the person approves, `timeout` passes (Nextcloud
    /// forgets a login after 20 minutes) or `cancellation` is set (Ctrl-C).
    public func waitForApproval(_ pending: Pending, every interval: Double = 2, timeout: Double = 20 * 60,
                                cancellation: CancellationFlag) throws -> Approval {
        session.cancellation = cancellation
        let deadline = MonotonicClock.seconds() + timeout
        while true {
            if cancellation.isCancelled { throw TransportError(kind: .cancelled, message: "login cancelled") }
            if let approval = try poll(pending) { return approval }
            let next = MonotonicClock.seconds() + interval
            if next > deadline {
                throw TransportError(kind: .timeout, message: "nobody approved the login within \(Int(timeout)) s; start again")
            }
            // Sleep in short steps so a cancel is felt at once.
            while MonotonicClock.seconds() < next {
                if cancellation.isCancelled { throw TransportError(kind: .cancelled, message: "login cancelled") }
                usleep(50_000)
            }
        }
    }

    static func sameOrigin(_ a: String, _ b: String) -> Bool {
        guard let x = URLComponents(string: a), let y = URLComponents(string: b) else { return false }
        func port(_ c: URLComponents) -> Int { c.port ?? (c.scheme?.lowercased() == "https" ? 443 : 80) }
        return x.scheme?.lowercased() == y.scheme?.lowercased() && x.host?.lowercased() == y.host?.lowercased() && port(x) == port(y)
    }
}
