import CSystem
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
        var pipe: [Int32] = [-1, -1]
        guard csystem_pipe_cloexec(&pipe) == 0 else {
            Log.debug("\(executable): \(SystemError("pipe2"))")
            return nil
        }
        let (readEnd, writeEnd) = (pipe[0], pipe[1])
        defer { close(readEnd) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

        // The agent's threads may have signals blocked; the child starts with none blocked
        // and default handlers, so the SIGKILL below and its own SIGPIPE behave normally.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        // nmcli translates its values; the parser reads the C locale's words.
        var environment = ProcessEnvironment.current
        environment["LANGUAGE"] = nil
        environment["LC_ALL"] = "C"
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(writeEnd)
        guard spawned == 0 else {
            Log.debug("\(executable): \(SystemError("posix_spawn", errno: spawned))")
            return nil
        }

        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var finished = false
        while !finished {
            let remaining = clock.now.duration(to: deadline)
            if remaining <= .zero { break }
            var fd = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&fd, 1, Int32(saturating: (remaining / .milliseconds(1)).rounded(.up)))
            if ready < 0 { if errno == EINTR { continue }; break }
            if ready == 0 { continue }
            let n = read(readEnd, &buffer, buffer.count)
            if n < 0 { if errno == EINTR { continue }; break }
            if n == 0 { finished = true }
            if output.count < 64 * 1024 { output += buffer[0..<min(n, 64 * 1024 - output.count)] }
        }
        // Stdout closed is not exit: give the process what is left of the deadline.
        var status: Int32 = 0
        while true {
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid { break }
            if waited < 0 && errno != EINTR { return nil }
            if clock.now >= deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                Log.debug("\(executable) did not finish within \(timeout); killed")
                return nil
            }
            usleep(5_000)
        }
        let exited = status & 0x7f == 0
        return CommandOutput(status: exited ? (status >> 8) & 0xff : -1,
                             output: String(decoding: output, as: UTF8.self))
    }
}
