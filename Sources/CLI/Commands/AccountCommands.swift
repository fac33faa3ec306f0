import Desktop
import Engine
import FoundationEssentials
import Glibc
import Platform
import Queue
import Transport

/// `account add|list|remove`: accounts live in the queue database without secrets; the
/// password (or the app password a browser login gives) goes to the Secret Service or a
/// 0600 file.
public enum AccountCommands {
    public struct AddRequest {
        public var name: String?
        /// The address a person types (`https://cloud.example.org`): discovery finds the rest.
        public var address: String?
        /// Given instead of an address: a tus server beside a WebDAV one, as they are.
        public var webdavURL: String?
        public var tusURL: String?
        /// Nil (or `login`) where the server offers a browser login: the person logs in there.
        public var username: String?
        public var login = false
        public var passwordFromStdin = false
        public var wifiOnly = false
        /// A CA file trusted for this server (a private certificate authority).
        public var caFile: String?
        /// Accept `http://` to a host that is not this machine: the password travels in clear text.
        public var allowInsecureHTTP = false
        public init(name: String?, address: String?, webdavURL: String? = nil, tusURL: String? = nil, username: String?) {
            self.name = name; self.address = address; self.webdavURL = webdavURL; self.tusURL = tusURL; self.username = username
        }

        var typedAddresses: [String] { ([address] + [webdavURL, tusURL]).compactMap { $0 } }
    }

    /// Finds out what the server is, logs in (or takes the password), checks it against the
    /// server, and only then saves anything.
    public static func add(_ request: AddRequest, context: CommandContext) -> Int32 {
        for url in request.typedAddresses {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme),
                  parsed.host?.isEmpty == false else {
                context.complain("`\(DisplayText.escape(url))` is not an http(s) address; give the full URL, e.g. https://cloud.example.org")
                return ExitStatus.usage
            }
        }
        // Basic auth over plain http is readable by anyone on the way; only this machine is exempt.
        for url in request.typedAddresses
        where url.lowercased().hasPrefix("http://") && !Account.isLoopback(url) && !request.allowInsecureHTTP {
            context.complain("\(Log.redact(url: url)) is plain http to another machine: the password would cross the network in clear text (Basic auth)\n"
                             + "  use https://, or pass --allow-insecure-http if the network in between is yours alone")
            return ExitStatus.usage
        }
        // The requests below trust exactly what the agent will trust for this account.
        let provisional = Account(id: 0, name: request.name ?? "new", webdavURL: request.webdavURL ?? request.address ?? "",
                                  tusURL: request.tusURL, username: request.username ?? "", caFile: request.caFile)
        let settings: TransferSettings
        do { settings = try context.transferSettings(for: provisional) } catch {
            context.complain("\(error)")
            return ExitStatus.environment
        }

        let credentials: Credentials
        var appPassword = false
        switch signIn(request, account: provisional, settings: settings, context: context) {
        case .success(let c, let fromBrowser):
            credentials = c
            appPassword = fromBrowser
        case .exit(let status):
            return status
        }

        let found: AccountServer.Found
        do {
            found = try AccountServer.find(request, credentials: credentials, settings: settings, account: provisional)
        } catch let e as DiscoveryError {
            context.complain(e.description)
            // Nothing usable at the address is the person's to fix; maintenance passes.
            return e.code == .maintenance ? ExitStatus.environment : ExitStatus.attention
        } catch let e as AccountServer.Refusal {
            context.complain(e.message)
            return e.status
        } catch {
            context.complain("the server at \(Log.redact(url: request.typedAddresses.first ?? "")) did not work: \(explain(error, user: credentials.username))")
            return ExitStatus.of(serverError: error)
        }

        let name = request.name ?? "\(credentials.username)@\(URL(string: found.webdavURL)?.host ?? "server")"
        do {
            let store = try context.openStore()
            let secrets = SecretStore(paths: context.paths)
            let backend = try secrets.save(account: name, password: credentials.password) { why in
                askToKeepInFile(why, file: context.paths.credentialsFile)
            }
            try store.addAccount(name: name, webdavURL: found.webdavURL, tusURL: found.tusURL, username: credentials.username,
                                 wifiOnly: request.wifiOnly, caFile: request.caFile, server: found.profile)
            context.say("added account \(DisplayText.escape(name)) (\(DisplayText.escape(credentials.username)) at \(URL(string: found.webdavURL)?.host ?? "?")): "
                        + found.summary)
            context.say(appPassword ? "the app password the server gave is saved in the \(backend.rawValue); your own password was not asked for or kept"
                                    : "password saved in the \(backend.rawValue)")
            // A running agent asks for the password again, and watch rules waiting for this account start.
            context.wakeAgent()
            return ExitStatus.ok
        } catch {
            context.complain("\(error)")
            return ExitStatus.environment
        }
    }

    enum SignIn {
        case success(Credentials, fromBrowser: Bool)
        case exit(Int32)
    }

    /// The credentials to use: from a browser login where asked for (or where no user was
    /// given and the server offers one), else the user's password from the terminal or stdin.
    static func signIn(_ request: AddRequest, account: Account, settings: TransferSettings, context: CommandContext) -> SignIn {
        if let address = request.address, request.login || request.username == nil {
            let status: ServerStatus?
            do {
                let discovery = try ServerDiscovery(address: address, credentials: nil)
                settings.prepare(discovery.session, for: account)
                status = try discovery.status()
            } catch {
                context.complain("the server at \(Log.redact(url: address)) did not work: \(explain(error, user: "you"))")
                return .exit(ExitStatus.of(serverError: error))
            }
            guard let status, status.kind == .nextcloud else {
                context.complain((status.map { "\($0.product) does not offer Nextcloud's browser login" } ?? "\(Log.redact(url: address)) offers no browser login")
                                 + ": give your user name with --user NAME, and the password (or an app password) when asked")
                return .exit(ExitStatus.usage)
            }
            if status.maintenance {
                context.complain("\(status.product) at \(Log.redact(url: address)) is in maintenance mode; try again when the administrator has finished")
                return .exit(ExitStatus.environment)
            }
            switch BrowserLogin(address: address, account: account, settings: settings, context: context).run() {
            case .approved(let approval):
                return .success(Credentials(username: approval.loginName, password: approval.appPassword), fromBrowser: true)
            case .cancelled:
                context.complain("login stopped; nothing was saved")
                return .exit(ExitStatus.interrupted)
            case .failed(let why, let status):
                context.complain(why)
                return .exit(status)
            }
        }
        guard let user = request.username else {
            context.complain("missing --user NAME")
            return .exit(ExitStatus.usage)
        }
        let host = URL(string: request.address ?? request.webdavURL ?? "")?.host ?? "the server"
        guard let password = readPassword(fromStdin: request.passwordFromStdin, user: user, host: host, context: context) else {
            return .exit(ExitStatus.usage)
        }
        return .success(Credentials(username: user, password: password), fromBrowser: false)
    }

    /// One line for what went wrong while checking an account.
    static func explain(_ error: Error, user: String) -> String { FailureWords.of(error, user: user).line }

    public static func list(json: Bool, context: CommandContext) -> Int32 {
        do {
            let accounts = try context.openStore().accounts()
            if json {
                context.say(JSONOutput.encode(accounts.map(AccountJSON.init)))
            } else if accounts.isEmpty {
                context.say("no accounts yet: add one with `instant-upload account add https://your.server`")
            } else {
                for a in accounts {
                    var fields = [DisplayText.escape(a.name), DisplayText.escape(a.username), AccountServer.describe(a.server),
                                  a.server.uploadMethod.rawValue, "webdav \(Log.redact(url: a.webdavURL))"]
                    if let tus = a.tusURL, !a.server.createsTusInFolders { fields.append("tus \(Log.redact(url: tus))") }
                    if a.wifiOnly { fields.append("Wi-Fi only") }
                    if let ca = a.caFile { fields.append("CA file \(DisplayText.escape(ca))") }
                    context.say(fields.joined(separator: "\t"))
                }
            }
            return ExitStatus.ok
        } catch {
            context.complain("\(error)")
            return ExitStatus.environment
        }
    }

    public static func remove(_ name: String, context: CommandContext) -> Int32 {
        do {
            guard try context.openStore().removeAccount(named: name) else {
                context.complain("there is no account named \(DisplayText.escape(name)); see `instant-upload account list`")
                return ExitStatus.attention
            }
            SecretStore(paths: context.paths).remove(account: name)
            context.say("removed account \(name) and its queued transfers")
            context.wakeAgent()
            return ExitStatus.ok
        } catch {
            context.complain("\(error)")
            return ExitStatus.environment
        }
    }

    /// Asks on the terminal (`/dev/tty`, so a password piped in with `--password-stdin`
    /// does not stand in the way) whether the password may go to the credentials file after
    /// the keyring refused it. Without a terminal the answer is no: nothing is written that
    /// the person did not agree to.
    static func askToKeepInFile(_ why: String, file: String) -> Bool {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard tty >= 0 else { return false }
        defer { close(tty) }
        let question = "\(why).\nKeep the password in \(DisplayText.escape(file)) instead, readable only by you? [y/N] "
        _ = question.withCString { write(tty, $0, strlen($0)) }
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while answer.count < 64, read(tty, &byte, 1) == 1, byte != UInt8(ascii: "\n") { answer.append(byte) }
        let said = String(decoding: answer, as: UTF8.self).trimmingBlanks().lowercased()
        return said == "y" || said == "yes"
    }

    /// Reads the password: one line from stdin with `--password-stdin`, else a prompt
    /// without echo on a terminal that names whose password it asks for
    /// (`Password for alice at cloud.example.org: `).
    public static func readPassword(fromStdin: Bool, user: String, host: String, context: CommandContext) -> String? {
        if fromStdin || isatty(0) == 0 {
            guard fromStdin else {
                context.complain("no terminal to ask for the password: pipe it in with --password-stdin")
                return nil
            }
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                context.complain("--password-stdin: nothing on standard input")
                return nil
            }
            return line
        }
        // Silent before the prompt shows: what is typed once it shows is neither echoed nor
        // thrown away with what was typed before it (TCSAFLUSH).
        var old = termios()
        tcgetattr(0, &old)
        var silent = old
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(0, TCSAFLUSH, &silent)
        context.error("Password for \(DisplayText.escape(user)) at \(DisplayText.escape(host)): ")
        let line = readLine(strippingNewline: true)
        tcsetattr(0, TCSAFLUSH, &old)
        context.error("\n")
        return line
    }
}

/// One account in `account list --json`; absent values are `null`.
struct AccountJSON: Encodable {
    var name: String
    var user: String
    /// `nextcloud`, `owncloud` or `webdav`.
    var server_kind: String
    var server_product: String?
    var server_version: String?
    /// `tus`, `nextcloud-chunking` or `webdav-put`.
    var upload_protocol: String
    var webdav_url: String
    var tus_url: String?
    var uploads_url: String?
    var user_id: String?
    var wifi_only: Bool

    init(_ a: Account) {
        name = a.name; user = a.username; server_kind = a.server.kind.rawValue; server_product = a.server.product
        server_version = a.server.version; upload_protocol = a.server.uploadMethod.rawValue; webdav_url = a.webdavURL
        tus_url = a.tusURL; uploads_url = a.server.uploadsURL; user_id = a.server.userID; wifi_only = a.wifiOnly
    }

    enum CodingKeys: String, CodingKey {
        case name, user, server_kind, server_product, server_version, upload_protocol, webdav_url, tus_url, uploads_url, user_id, wifi_only
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(user, forKey: .user)
        try c.encode(server_kind, forKey: .server_kind)
        try c.encode(server_product, forKey: .server_product)
        try c.encode(server_version, forKey: .server_version)
        try c.encode(upload_protocol, forKey: .upload_protocol)
        try c.encode(webdav_url, forKey: .webdav_url)
        try c.encode(tus_url, forKey: .tus_url)
        try c.encode(uploads_url, forKey: .uploads_url)
        try c.encode(user_id, forKey: .user_id)
        try c.encode(wifi_only, forKey: .wifi_only)
    }
}
