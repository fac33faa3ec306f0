import Foundation
import Platform
import Glibc

/// The reference server (tus + WebDAV, see reference-server/) running on loopback for one test.
///
/// Starts `.venv/bin/python reference-server/server.py` on a free port and waits for its
/// READY line. Fails loudly, never skips, when the virtualenv is missing.
public final class ReferenceServer: @unchecked Sendable {
    // Sendable by construction: fields are set in init and only read afterwards, except
    // `process`, which is replaced only by `restart()`, called from the owning test.
    public let data: TemporaryFolder
    public private(set) var baseURL: String = ""
    public private(set) var port: Int = 0
    public let users: [(String, String)]
    private var process: (any ServerProcess)?
    private var extraArguments: [String]
    /// The port kept taken while the server is stopped or killed (`LoopbackPort.hold`).
    private var portHold: Int32?

    /// The network namespace the server runs in (nil: this one), and the address it listens on.
    public let namespace: String?
    public let host: String

    /// The certificates the server speaks https with (nil: plain http).
    public let certificates: TestCertificates?
    /// What the server looks like (`--face`, see reference-server/README.md).
    public enum Face: String, Sendable {
        /// tus at `/files/`, WebDAV at `/dav/<user>/`.
        case tus
        /// A Nextcloud server: status.php, OCS, Login Flow v2, `remote.php/dav` with chunked upload v2.
        case nextcloud
        /// A plain WebDAV server at `/dav/<user>/`, nothing else.
        case webdav
    }
    public let face: Face

    public init(users: [(String, String)] = [("alice", "wonderland")], arguments: [String] = [], port: Int = 0,
                namespace: String? = nil, host: String = "127.0.0.1", face: Face = .tus,
                tls certificates: TestCertificates? = nil) throws {
        self.data = TemporaryFolder("iu-server")
        self.users = users
        self.face = face
        self.certificates = certificates
        self.extraArguments = ["--face", face.rawValue] + arguments + (certificates?.serverArguments ?? [])
        self.namespace = namespace
        self.host = host
        try start(port: port)
    }

    deinit {
        process?.stop(grace: 10)
        releasePort()
    }

    public var python: String { Repository.root + "/.venv/bin/python" }

    func start(port requested: Int) throws {
        releasePort()
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestFailure("the reference server needs \(python): run `make test` (or `make venv`) to create it")
        }
        var executable = python
        var args = [Repository.root + "/reference-server/server.py", "--data", data.path, "--host", host,
                    "--port", String(requested)]
        if let namespace {
            executable = "/usr/sbin/ip"
            args = ["netns", "exec", namespace, python] + args
        }
        for (user, password) in users { args += ["--user", "\(user):\(password)"] }
        if namespace == nil {
            // Forked from the spawner, which imported the server's modules once.
            let (server, line) = try ServerSpawner.running(python: python).start(Array(args.dropFirst()) + extraArguments)
            process = server
            guard line.hasPrefix("READY ") else {
                server.stop()
                throw TestFailure("the reference server did not become ready (it said: \(line))")
            }
            ready(line)
            return
        }
        let process = try ChildProcess(executable, args + extraArguments, output: .pipe,
                                       error: ProcessInfo.processInfo.environment["IU_SERVER_LOG"] != nil ? .inherit : .null)
        self.process = process
        // Wait for "READY http://127.0.0.1:PORT".
        let handle = process.standardOutput!
        var buffer = Data()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            if let text = String(data: buffer, encoding: .utf8), let line = text.split(separator: "\n").first(where: { $0.hasPrefix("READY ") }) {
                ready(line)
                // Keep draining stdout so the server never blocks on a full pipe.
                Thread { while !handle.availableData.isEmpty {} }.start()
                return
            }
        }
        process.stop()
        throw TestFailure("the reference server did not become ready within 30 s (output: \(String(decoding: buffer, as: UTF8.self)))")
    }

    /// Takes the address from the server's `READY http://HOST:PORT` line.
    private func ready<Line: StringProtocol>(_ line: Line) {
        baseURL = String(line.dropFirst("READY ".count)).trimmingCharacters(in: .whitespaces)
        port = Int(baseURL.split(separator: ":").last ?? "") ?? 0
    }

    public func stop() {
        process?.stop(grace: 10) // SIGCONT first: a suspended server could not act on SIGTERM
        holdPort()
    }

    /// SIGKILL, as a crash would.
    public func kill() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        holdPort()
    }

    /// While the server is down, its port stays taken (in this namespace; one of its own
    /// holds no other test's server), so the agent finds nothing there rather than a server
    /// another test started on the same port.
    private func holdPort() {
        guard namespace == nil, port != 0, portHold == nil else { return }
        portHold = LoopbackPort.hold(port, host: host)
    }

    private func releasePort() {
        if let portHold { close(portHold) }
        portHold = nil
    }

    /// The port held while the server is down, as the kernel has the holding socket bound
    /// (nil while it runs, or when none could be bound).
    public var heldPort: Int? { portHold.flatMap(LoopbackPort.boundPort) }

    /// SIGSTOP: the kernel still accepts connections, but nothing answers, as a hung server.
    public func suspend() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGSTOP)
    }

    /// SIGCONT after `suspend`: it answers what it was sent meanwhile.
    public func resume() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGCONT)
    }

    /// Starts again on the same port and data folder (after `kill` or `stop`).
    public func restart() throws {
        stop()
        try start(port: port)
    }

    public var tusURL: String { baseURL + "/files/" }
    public func webdavURL(_ user: String = "alice") -> String { baseURL + "/dav/\(user)/" }
    /// The account's tree on disk.
    public func tree(_ user: String = "alice") -> String { data.path + "/tree/\(user)" }

    // MARK: Control API

    @discardableResult
    public func control(_ method: String, _ path: String, json: Any? = nil) throws -> Any? {
        var args = ["-s", "-o", "-", "-w", "\n%{http_code}", "-X", method]
        if let certificates { args += ["--cacert", certificates.caFile] }
        if let json {
            let body = try JSONSerialization.data(withJSONObject: json)
            args += ["-H", "Content-Type: application/json", "--data-binary", String(decoding: body, as: UTF8.self)]
        }
        args.append(baseURL + "/_control/" + path)
        let r = namespace.map { try? Shell.capture("/usr/sbin/ip", ["netns", "exec", $0, "/usr/bin/curl"] + args) }
            ?? (try? Shell.capture("/usr/bin/curl", args))
        guard let r else { throw TestFailure("curl could not run") }
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.last ?? "") ?? 0
        guard (200..<300).contains(status) else { throw TestFailure("control \(path) answered \(status): \(r.stdout)") }
        let data = Data(lines.dropLast().joined(separator: "\n").utf8)
        return data.isEmpty ? nil : try? JSONSerialization.jsonObject(with: data)
    }

    /// Adds a fault, e.g. `["method": "PATCH", "status": 503, "count": 1]`.
    public func fault(_ spec: [String: Any]) throws { try control("POST", "faults", json: spec) }
    public func clearFaults() throws { try control("DELETE", "faults") }
    public func stats() throws -> [String: Any] { (try control("GET", "stats") as? [String: Any]) ?? [:] }
    public func setQuota(user: String = "alice", availableBytes: Int?) throws {
        try control("POST", "quota", json: ["user": user, "available_bytes": availableBytes as Any])
    }

    /// Makes a folder in the account's tree directly on disk.
    public func makeFolder(_ relative: String, user: String = "alice") throws {
        try FileManager.default.createDirectory(atPath: tree(user) + "/" + relative, withIntermediateDirectories: true)
    }
}

// MARK: The Nextcloud face

extension ReferenceServer {
    /// An account as the Nextcloud face shows it: its user id and absolute WebDAV and uploads URLs.
    public struct NextcloudAccount: Sendable {
        public var id: String
        public var webdavURL: String
        public var uploadsURL: String
    }

    /// Asks the server for an account's user id and paths (`GET /_control/users`).
    public func nextcloudAccount(_ user: String = "alice") throws -> NextcloudAccount {
        guard let all = try control("GET", "users") as? [String: [String: String]], let entry = all[user],
              let id = entry["id"], let webdav = entry["webdav"], let uploads = entry["uploads"] else {
            throw TestFailure("the server has no Nextcloud account \(user) (is it started with face: .nextcloud?)")
        }
        return NextcloudAccount(id: id, webdavURL: baseURL + webdav, uploadsURL: baseURL + uploads)
    }

    /// Maintenance mode on or off.
    public func setMaintenance(_ on: Bool) throws { try control("POST", "maintenance", json: ["on": on]) }

    /// Approves a pending Login Flow v2 login for `user`, as the person would in the browser.
    public func approveLogin(user: String = "alice", loginURL: String? = nil) throws {
        var body: [String: Any] = ["user": user]
        if let loginURL { body["login"] = loginURL }
        try control("POST", "login", json: body)
    }

    /// The address a person types for this face: the Nextcloud's base (with its path prefix,
    /// given as `prefix`), or the WebDAV folder of `user` for the tus and plain-WebDAV faces.
    public func address(prefix: String = "", user: String = "alice") -> String {
        face == .nextcloud ? baseURL + prefix : webdavURL(user)
    }

    /// Makes every chunked-upload folder expire now.
    public func expireUploads() throws { try control("POST", "uploads/expire") }
}

/// A reference server's process: a child of the test (started in a network namespace), or
/// one the spawner forked.
protocol ServerProcess {
    var processIdentifier: pid_t { get }
    var isRunning: Bool { get }
    func stop(grace: Double)
    func waitUntilExit()
}

extension ChildProcess: ServerProcess {}
extension SpawnedServer: ServerProcess {}
