import Desktop
import Engine
import Glibc
import Platform
import Queue
import Watcher

/// What every command runs with: where things are, and how to talk to the person.
public struct CommandContext {
    public var paths: XDGPaths
    public var output: (String) -> Void
    public var error: (String) -> Void
    /// Standard output's descriptor when `output` writes there (no other output given).
    private let outputDescriptor: Int32?

    public init(paths: XDGPaths = XDGPaths(),
                output: ((String) -> Void)? = nil,
                error: @escaping (String) -> Void = { StandardStreams.writeError($0) }) {
        self.paths = paths
        self.output = output ?? { StandardStreams.writeOutput($0) }
        outputDescriptor = output == nil ? 1 : nil
        self.error = error
    }

    /// Output for a long text written while a snapshot of the queue is held: out at once
    /// while standard output takes it, kept for after the snapshot otherwise. Nil when the
    /// output goes elsewhere; the text is then said whole, after.
    func eagerOutput() -> EagerOutput? { outputDescriptor.map(EagerOutput.init(fd:)) }

    /// Writes `line` and a line break. A long text (`queue --json` of a long queue) goes in
    /// two writes rather than copied whole to add one byte: past `PIPE_BUF` a write to a pipe
    /// is not one piece anyway.
    public func say(_ line: String) {
        guard line.utf8.count > PIPE_BUF else { return output(line + "\n") }
        output(line)
        output("\n")
    }
    public func complain(_ line: String) { error(line + "\n") }

    /// Opens the queue, turning every way that can fail into words for the person.
    public func openStore() throws -> QueueStore {
        try QueueStore(path: paths.queueDatabase)
    }

    /// The settings of the config file; its watch rules are checked too, so a broken rule
    /// stops every command with the line to fix, as any other broken setting does.
    public func configuration() throws -> Configuration {
        let configuration = try Configuration.load(paths.configFile)
        _ = try readWatchRules()
        return configuration
    }

    /// The config file's text (empty when there is none) and its watch rules.
    public func watchConfig() throws -> (text: String, rules: [WatchRule]) {
        _ = try Configuration.load(paths.configFile)
        return try readWatchRules()
    }

    private func readWatchRules() throws -> (text: String, rules: [WatchRule]) {
        let path = paths.configFile
        guard FileIO.exists(path) else { return ("", []) }
        let text: String
        do { text = try FileIO.readSmallFile(path) } catch { throw Configuration.Problem(file: path, message: error.reason) }
        do { return (text, try WatchRule.rules(inConfig: text)) } catch { throw Configuration.Problem(file: path, message: error.description) }
    }

    /// Replaces the config file with `text` at once (a new file renamed over it), keeping
    /// its permissions.
    public func writeConfig(_ text: String) throws {
        try PrivateFolder.prepare(paths.configDirectory, role: .config)
        var st = stat()
        let mode = stat(paths.configFile, &st) == 0 ? st.st_mode & 0o777 : 0o600
        do { try FileIO.writeAtomically(paths.configFile, Array(text.utf8), mode: mode) } catch {
            throw Configuration.Problem(file: paths.configFile, message: "it cannot be written (\(error.reason))")
        }
    }

    /// How the CLI's own requests to `account`'s server are set up, exactly as the agent's
    /// are: a CA file that cannot be used stops the command (exit 3) before any request.
    public func transferSettings(for account: Account) throws -> TransferSettings {
        var settings = try configuration().transferSettings
        try CAFile.check(account)
        // A person waits on these few small requests; a short stall limit tuned for
        // transfers would give up on a server that is merely slow to answer.
        settings.stallSeconds = max(settings.stallSeconds, Self.requestStallSeconds)
        return settings
    }

    static let requestStallSeconds = 30

    /// True when an agent answers on the control socket.
    public var agentRunning: Bool { agentPID != nil }

    /// The process ID of the agent that answers on the control socket, if one does (0 when it
    /// answers without one).
    public var agentPID: Int32? {
        guard let reply = ControlSocketClient.send("ping", to: paths.controlSocket), reply.hasPrefix("pong") else { return nil }
        return Int32(reply.dropFirst("pong".count).trimmingBlanks()) ?? 0
    }

    /// Rings the agent's doorbell; false when none is listening (the work waits in the queue).
    @discardableResult
    public func wakeAgent() -> Bool {
        ControlSocketClient.send("wake", to: paths.controlSocket) != nil
    }

    /// Wakes the agent, or starts one when the configuration allows: the systemd user
    /// service where it is installed, else a detached `instant-upload run`.
    public func wakeOrStartAgent(waitUntilReady: Bool = true) {
        if wakeAgent() { return }
        let autostart: Bool
        do { autostart = try configuration().autostart } catch {
            complain("\(error)")
            return
        }
        guard autostart else {
            complain("the agent is not running: the queued items wait safely; start it with `instant-upload run`")
            return
        }
        if AgentLauncher.startService(paths: paths) {
            say("started the agent's user service (\(UserService.unitName))")
        } else if AgentLauncher.startDetached(paths: paths, waitUntilReady: waitUntilReady) {
            say("started the agent in the background")
        } else {
            complain("could not start the agent: the queued items wait safely; start it with `instant-upload run`")
        }
    }
}
