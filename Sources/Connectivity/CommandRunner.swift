import Glibc
import Platform

/// What a finished program said.
public struct CommandOutput: Sendable, Equatable {
    /// The exit status; -1 when a signal ended it.
    public var status: Int32
    /// Standard output, up to 64 KiB.
    public var output: String

    public init(status: Int32, output: String) {
        self.status = status
        self.output = output
    }
}

/// Runs a helper program (nmcli) with a deadline, so a hung D-Bus cannot hang the agent.
enum CommandRunner {
    /// Runs `executable` with `arguments` in the C locale, stdin and stderr on /dev/null.
    /// nil when it could not start or was killed at the deadline.
    static func run(_ executable: String, _ arguments: [String], timeout: Duration) -> CommandOutput? {
        // nmcli translates its values; the parser reads the C locale's words.
        var environment = ProcessEnvironment.current
        environment["LANGUAGE"] = nil
        environment["LC_ALL"] = "C"
        do {
            guard let finished = try ChildProcess.run(executable, arguments, environment: environment, timeout: timeout,
                                                      limit: 64 * 1024) else { return nil }
            return CommandOutput(status: finished.status, output: finished.output)
        } catch {
            Log.debug("\(executable): \(error)")
            return nil
        }
    }
}
