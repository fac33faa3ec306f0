import Desktop
import Engine
import Foundation
import Glibc
import Platform
import Queue

/// What every command runs with: where things are, and how to talk to the person.
public struct CommandContext {
    public var paths: XDGPaths
    public var output: (String) -> Void
    public var error: (String) -> Void

    public init(paths: XDGPaths = XDGPaths(),
                output: @escaping (String) -> Void = { StandardStreams.writeOutput($0) },
                error: @escaping (String) -> Void = { StandardStreams.writeError($0) }) {
        self.paths = paths
        self.output = output
        self.error = error
    }

    public func say(_ line: String) { output(line + "\n") }
    public func complain(_ line: String) { error(line + "\n") }

    /// Opens the queue, turning every way that can fail into words for the person.
    public func openStore() throws -> QueueStore {
        try QueueStore(path: paths.queueDatabase)
    }

    public func configuration() throws -> Configuration {
        try Configuration.load(paths.configFile)
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
        return Int32(reply.dropFirst("pong".count).trimmingCharacters(in: .whitespaces)) ?? 0
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
