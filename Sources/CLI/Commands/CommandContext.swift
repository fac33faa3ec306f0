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

    /// Wakes the agent, or starts one in the background when the configuration allows.
    public func wakeOrStartAgent() {
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
        if AgentLauncher.startDetached(paths: paths) {
            say("started the agent in the background")
        } else {
            complain("could not start the agent: the queued items wait safely; start it with `instant-upload run`")
        }
    }
}
