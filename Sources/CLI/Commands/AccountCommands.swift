import Desktop
import Engine
import Foundation
import Glibc
import Platform
import Queue
import Transport

/// `account add|list|remove`: accounts live in the queue database without secrets; the
/// password goes to the Secret Service or a 0600 file.
public enum AccountCommands {
    public struct AddRequest {
        public var name: String?
        public var webdavURL: String
        public var tusURL: String
        public var username: String
        public var password: String
        public var wifiOnly = false
        /// A CA file trusted for this server (a private certificate authority).
        public var caFile: String?
        /// Accept `http://` to a host that is not this machine: the password travels in clear text.
        public var allowInsecureHTTP = false
        public init(name: String?, webdavURL: String, tusURL: String, username: String, password: String) {
            self.name = name; self.webdavURL = webdavURL; self.tusURL = tusURL; self.username = username; self.password = password
        }
    }

    /// Guesses the reference server's layout from its base address.
    public static func guessLayout(base: String, username: String) -> (webdav: String, tus: String) {
        var root = base
        while root.hasSuffix("/") { root.removeLast() }
        let user = username.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? username
        return (root + "/dav/\(user)/", root + "/files/")
    }

    /// Checks the server with the given password before anything is saved.
    public static func add(_ request: AddRequest, context: CommandContext) -> Int32 {
        for url in [request.webdavURL, request.tusURL] {
            guard let parsed = URL(string: url), let scheme = parsed.scheme, ["http", "https"].contains(scheme), parsed.host != nil else {
                context.complain("`\(url)` is not an http(s) address; give the full URL, e.g. https://cloud.example.org/files/")
                return ExitStatus.usage
            }
        }
        // Basic auth over plain http is readable by anyone on the way; only this machine is exempt.
        for url in [request.webdavURL, request.tusURL]
        where url.lowercased().hasPrefix("http://") && !Account.isLoopback(url) && !request.allowInsecureHTTP {
            context.complain("\(Log.redact(url: url)) is plain http to another machine: the password would cross the network in clear text (Basic auth)\n"
                             + "  use https://, or pass --allow-insecure-http if the network in between is yours alone")
            return ExitStatus.usage
        }
        if URL(string: request.webdavURL)?.host != URL(string: request.tusURL)?.host {
            context.complain("note: the WebDAV and tus addresses are on different hosts; the password is sent to both")
        }
        let credentials = Credentials(username: request.username, password: request.password)
        let name = request.name ?? defaultName(request)
        // The checks below trust exactly what the agent will trust for this account.
        let account = Account(id: 0, name: name, webdavURL: request.webdavURL, tusURL: request.tusURL, username: request.username,
                              caFile: request.caFile)
        let settings: TransferSettings
        do { settings = try context.transferSettings(for: account) } catch {
            context.complain("\(error)")
            return ExitStatus.environment
        }
        // 1. tus: version, extensions, size limit.
        let info: TusServerInfo
        do {
            let tus = TusClient(endpoint: request.tusURL, credentials: credentials)
            settings.prepare(tus.session, for: account)
            info = try tus.discover()
        } catch {
            context.complain("the tus address \(Log.redact(url: request.tusURL)) did not work: \(explain(error, user: request.username))")
            return ExitStatus.of(serverError: error)
        }
        guard info.versions.contains("1.0.0") else {
            context.complain("the server speaks tus \(info.versions.joined(separator: ", ")), not 1.0.0")
            return ExitStatus.attention
        }
        // 2. WebDAV: the root must list, with this password.
        do {
            let dav = WebDAVClient(root: request.webdavURL, credentials: credentials)
            settings.prepare(dav.session, for: account)
            let root = try dav.properties(of: "/")
            guard root.isFolder else {
                context.complain("the WebDAV address \(Log.redact(url: request.webdavURL)) is a file, not a folder")
                return ExitStatus.attention
            }
        } catch {
            context.complain("the WebDAV address \(Log.redact(url: request.webdavURL)) did not work: \(explain(error, user: request.username))")
            return ExitStatus.of(serverError: error)
        }
        do {
            let store = try context.openStore()
            let backend = try SecretStore(paths: context.paths).save(account: name, password: request.password)
            try store.addAccount(name: name, webdavURL: request.webdavURL, tusURL: request.tusURL, username: request.username,
                                 wifiOnly: request.wifiOnly, caFile: request.caFile)
            var extras: [String] = []
            if let max = info.maxSize { extras.append("up to \(HumanFormat.bytes(max)) per file") }
            if info.checksumAlgorithm != nil { extras.append("chunk checksums") }
            if info.supportsTermination { extras.append("cancel on server") }
            context.say("added account \(name) (\(request.username) at \(URL(string: request.tusURL)?.host ?? "?"))"
                        + (extras.isEmpty ? "" : ": " + extras.joined(separator: ", ")))
            context.say("password saved in the \(backend.rawValue)")
            // A running agent asks for the password again, and watch rules waiting for this account start.
            context.wakeAgent()
            return ExitStatus.ok
        } catch {
            context.complain("\(error)")
            return ExitStatus.environment
        }
    }

    static func defaultName(_ r: AddRequest) -> String {
        let host = URL(string: r.webdavURL)?.host ?? "server"
        return "\(r.username)@\(host)"
    }

    /// One line for what went wrong while checking an account.
    static func explain(_ error: Error, user: String) -> String { FailureWords.of(error, user: user).line }

    public static func list(json: Bool, context: CommandContext) -> Int32 {
        do {
            let accounts = try context.openStore().accounts()
            if json {
                context.say(JSONOutput.encode(accounts.map { AccountJSON(name: $0.name, user: $0.username, webdav_url: $0.webdavURL, tus_url: $0.tusURL, wifi_only: $0.wifiOnly) }))
            } else if accounts.isEmpty {
                context.say("no accounts yet: add one with `instant-upload account add --webdav URL --tus URL --user NAME`")
            } else {
                for a in accounts {
                    context.say("\(DisplayText.escape(a.name))\t\(a.username)\twebdav \(Log.redact(url: a.webdavURL))\ttus \(Log.redact(url: a.tusURL))"
                                + (a.wifiOnly ? "\tWi-Fi only" : "") + (a.caFile.map { "\tCA file \(DisplayText.escape($0))" } ?? ""))
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
        context.error("Password for \(DisplayText.escape(user)) at \(DisplayText.escape(host)): ")
        var old = termios()
        tcgetattr(0, &old)
        var silent = old
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(0, TCSAFLUSH, &silent)
        let line = readLine(strippingNewline: true)
        tcsetattr(0, TCSAFLUSH, &old)
        context.error("\n")
        return line
    }
}

struct AccountJSON: Encodable {
    var name: String
    var user: String
    var webdav_url: String
    var tus_url: String
    var wifi_only: Bool
}
