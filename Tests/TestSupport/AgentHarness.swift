import Foundation
import Platform
import Glibc

/// A person's session in a box: private XDG folders, the `instant-upload` and `share-to`
/// executables run as processes with that environment, and an agent that can be started,
/// killed and restarted.
public final class AgentHarness: @unchecked Sendable {
    // Sendable by construction: used from one test at a time; `agent` is only touched by
    // the owning test's thread.
    public let home: TemporaryFolder
    public var environment: [String: String]
    private var agent: ChildProcess?
    /// Run the programs inside this network namespace (`ip netns exec`).
    public var namespace: String?

    /// The executable and arguments for `program ARGS`, inside the namespace when there is one.
    func command(_ program: String, _ arguments: [String]) -> (String, [String]) {
        let path = Repository.binaries + "/" + program
        guard let namespace else { return (path, arguments) }
        return ("/usr/sbin/ip", ["netns", "exec", namespace, path] + arguments)
    }

    public init(extraEnvironment: [String: String] = [:]) throws {
        home = TemporaryFolder("iu-home")
        // Every place the product reads or writes is the box's own, whatever the caller's
        // environment says: its XDG folders, no display and no session bus unless a test
        // gives its own (`extraEnvironment`).
        var env = ProcessInfo.processInfo.environment
        for key in ["DBUS_SESSION_BUS_ADDRESS", "XDG_DOWNLOAD_DIR", "JOURNAL_STREAM", "INVOCATION_ID", "DISPLAY", "WAYLAND_DISPLAY",
                    "XDG_CONFIG_DIRS", "XDG_DATA_DIRS", "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP"] {
            env.removeValue(forKey: key)
        }
        env["HOME"] = home.path
        env["XDG_CONFIG_HOME"] = home.path + "/config"
        env["XDG_STATE_HOME"] = home.path + "/state"
        env["XDG_DATA_HOME"] = home.path + "/.local/share"
        env["XDG_CACHE_HOME"] = home.path + "/.cache"
        env["XDG_RUNTIME_DIR"] = home.path + "/run"
        try FileManager.default.createDirectory(atPath: home.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for (k, v) in extraEnvironment { env[k] = v }
        environment = env
        // Tests start the agent themselves unless they say otherwise.
        try writeConfig("[agent]\nautostart = false\n")
    }

    deinit { stopAgent() }

    public var databasePath: String { home.path + "/state/instant-upload/queue.sqlite3" }
    public var downloads: String { home.path + "/Downloads/Local Drive" }

    public func writeConfig(_ text: String) throws {
        try home.file("config/instant-upload/config.ini", bytes: Array(text.utf8))
    }

    /// Runs `instant-upload ARGS` and returns what it said.
    @discardableResult
    public func cli(_ arguments: [String], stdin: String? = nil) throws -> Shell.Result {
        let (exe, args) = command("instant-upload", arguments)
        return try Shell.capture(exe, args, environment: environment, stdin: stdin)
    }

    @discardableResult
    public func shareTo(_ arguments: [String]) throws -> Shell.Result {
        let (exe, args) = command("share-to", arguments)
        return try Shell.capture(exe, args, environment: environment)
    }

    /// Adds the reference server's account `alice` as account `home`.
    public func addAccount(_ server: ReferenceServer, user: String = "alice", password: String = "wonderland", name: String = "home") throws {
        // A server in another namespace is another machine: plain http there must be asked for.
        let insecure = server.host == "127.0.0.1" ? [] : ["--allow-insecure-http"]
        let r = try cli(["account", "add", "--webdav", server.webdavURL(user), "--tus", server.tusURL, "--user", user,
                         "--name", name, "--password-stdin"] + insecure, stdin: password + "\n")
        guard r.status == 0 else { throw TestFailure("account add failed (\(r.status)): \(r.stderr)") }
    }

    /// Adds the account at `address` as a person types it (`account add URL --user NAME`):
    /// discovery finds out what the server is and how to upload to it.
    public func addAccount(address: String, user: String = "alice", password: String = "wonderland", name: String = "home") throws {
        let r = try cli(["account", "add", address, "--user", user, "--name", name, "--password-stdin"], stdin: password + "\n")
        guard r.status == 0 else { throw TestFailure("account add \(address) failed (\(r.status)): \(r.stderr)") }
    }

    /// Starts `instant-upload ARGS` without waiting for it (a command that waits for the person).
    public func spawn(_ arguments: [String], environment extra: [String: String] = [:], output: ChildProcess.Stream = .pipe,
                      error: ChildProcess.Stream = .pipe) throws -> ChildProcess {
        let (exe, args) = command("instant-upload", arguments)
        return try ChildProcess(exe, args, environment: environment.merging(extra) { $1 }, output: output, error: error)
    }

    /// Starts `instant-upload run ARGUMENTS`; ready when `socket` (default: the harness's
    /// runtime folder's) exists.
    public func startAgent(socket: String? = nil, arguments: [String] = []) throws {
        let (exe, args) = command("instant-upload", ["run"] + arguments)
        let log = home.path + "/agent.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil) // each run's log on its own
        let process = try ChildProcess(exe, args, environment: environment, error: .file(log))
        agent = process
        // Ready when the doorbell answers.
        let deadline = Date().addingTimeInterval(15)
        while true {
            if FileManager.default.fileExists(atPath: socket ?? home.path + "/run/instant-upload/agent.sock") { return }
            if !process.isRunning { break }
            if Date() >= deadline { break }
            usleep(20_000)
        }
        throw TestFailure("the agent did not start: \(agentLog)")
    }

    public var agentLog: String { (try? String(contentsOfFile: home.path + "/agent.log", encoding: .utf8)) ?? "" }
    public var agentPID: Int32? { agent?.processIdentifier }

    /// How often the agent's scheduler (its main thread) wakes over `seconds` from now.
    public func schedulerWakeUps(over seconds: Double) throws -> Int {
        guard let pid = agentPID.map(String.init) else { throw TestFailure("no agent runs") }
        let before = try ThreadStats.contextSwitches(pid, of: pid)
        usleep(UInt32(seconds * 1_000_000))
        return try ThreadStats.contextSwitches(pid, of: pid) - before
    }

    /// SIGTERM (or `signal`) and wait; an agent still running after 30 s is killed, and it
    /// is said, so that a suite never hangs on an agent that did not stop. True when the
    /// agent stopped by itself, with exit status 0 (not ended by a signal's default action).
    @discardableResult
    public func stopAgent(signal: Int32 = SIGTERM) -> Bool {
        guard let agent, agent.isRunning else { return true }
        kill(agent.processIdentifier, signal)
        let stopped = agent.wait(seconds: 30)
        if !stopped {
            print("note: the agent (pid \(agent.processIdentifier)) did not stop within 30 s of signal \(signal); killed")
            kill(agent.processIdentifier, SIGKILL)
        }
        agent.waitUntilExit()
        return stopped && !agent.wasSignalled && agent.terminationStatus == 0
    }

    /// Waits up to `seconds` for the agent (`run --until-idle`) to exit by itself: its exit
    /// status, or nil when it ended by a signal or still ran (and was then stopped).
    public func waitForAgentExit(seconds: Double) -> Int32? {
        guard let agent else { return nil }
        guard agent.wait(seconds: seconds) else {
            stopAgent()
            return nil
        }
        agent.waitUntilExit()
        return agent.wasSignalled ? nil : agent.terminationStatus
    }

    /// SIGKILL, as a crash or the OOM killer would.
    public func killAgent() {
        guard let agent, agent.isRunning else { return }
        kill(agent.processIdentifier, SIGKILL)
        agent.waitUntilExit()
    }

    /// Starts the agent with its transfers set to wait at the crash window `window` (see
    /// `CrashWindow`), does `meanwhile`, and kills the agent once a transfer waits there. The
    /// next start goes by unpaused.
    public func killAgent(at window: String, meanwhile: () throws -> Void = {}) throws {
        environment["INSTANT_UPLOAD_TEST_PAUSE"] = window
        defer { environment.removeValue(forKey: "INSTANT_UPLOAD_TEST_PAUSE") }
        try startAgent()
        try meanwhile()
        try waitForAgentLog("paused at \(window)")
        killAgent()
    }

    public var agentIsRunning: Bool { agent?.isRunning ?? false }

    /// `queue --json` decoded.
    public func items() throws -> [[String: Any]] {
        let r = try cli(["queue", "--json"])
        guard r.status == 0 || r.status == 1 else { throw TestFailure("queue --json failed (\(r.status)): \(r.stderr)") }
        guard let array = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] else {
            throw TestFailure("queue --json is not a list: \(r.stdout.prefix(300))")
        }
        return array
    }

    /// Makes the agent's transfers wait at the crash window `window` (see `CrashWindow`) until
    /// `releasePause()`; set before the agent starts. Once released, later transfers go by.
    public func pause(at window: String) {
        environment["INSTANT_UPLOAD_TEST_PAUSE"] = window
        environment["INSTANT_UPLOAD_TEST_PAUSE_RELEASE"] = home.path + "/pause-released"
    }

    /// Lets the transfers waiting at the window go on; with `transfer`, only that one.
    public func releasePause(transfer: Int? = nil) {
        _ = FileManager.default.createFile(atPath: home.path + "/pause-released" + (transfer.map { ".\($0)" } ?? ""), contents: nil)
    }

    /// Waits until the agent's log says `text`, or fails with the end of the log.
    public func waitForAgentLog(_ text: String, timeout: Double = 60) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if agentLog.contains(text) { return }
            if Date() >= deadline { break }
            usleep(50_000)
        }
        throw TestFailure("the agent never said \"\(text)\"; log:\n\(agentLog.suffix(2000))")
    }

    /// Waits until `condition` holds over the queue's items, or fails with the queue and the agent's log.
    public func waitFor(_ what: String, timeout: Double = 60, _ condition: ([[String: Any]]) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var last: [[String: Any]] = []
        while true {
            last = try items()
            if condition(last) { return }
            if Date() >= deadline { break }
            usleep(100_000)
        }
        let states = last.map { "\($0["id"] ?? "?"):\($0["state"] ?? "?"):\(($0["reason"] as? [String: Any])?["code"] ?? "-")" }
        throw TestFailure("timed out waiting for \(what); queue: \(states.prefix(20)) agent log:\n\(agentLog.suffix(3000))")
    }

    public func waitForAll(_ state: String, count: Int? = nil, timeout: Double = 60) throws {
        try waitFor("all items \(state)", timeout: timeout) { items in
            (count == nil || items.count == count!) && !items.isEmpty && items.allSatisfy { $0["state"] as? String == state }
        }
    }
}
