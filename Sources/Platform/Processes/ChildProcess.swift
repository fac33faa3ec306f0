import CSystem
import Glibc

/// A program this one starts: a helper (systemctl, nmcli, secret-tool, a dialog), the
/// detached agent, or, in tests, servers and every CLI command.
///
/// Not Foundation's `Process`, for reasons found the hard way. Its child inherits the signal
/// mask of whichever thread started it (so SIGTERM can be blocked in the child for good),
/// it may inherit descriptors another thread opened a moment before (a detached agent then
/// holds a caller's pipe open, and whoever waits for its end waits forever), and it learns
/// that a child exited through a socket the child holds, which a sibling spawned at the same
/// moment can inherit too: the exit goes unseen and `waitUntilExit` spins meanwhile. Here
/// the child gets an empty mask and default signal actions, inherits nothing but its three
/// standard descriptors, and is reaped by its pid.
public final class ChildProcess: @unchecked Sendable {
    // Sendable by construction: the pipe ends and the pid never change after init; `exit`
    // is `Locked`.

    /// Where a standard descriptor of the child leads.
    public enum Stream: Sendable {
        /// This program's own.
        case inherit
        /// /dev/null.
        case null
        /// A pipe this program reads or writes (`standardInput`/`standardOutput`/`standardError`).
        case pipe
        /// A file, created with `mode` if needed, appended to.
        case file(String, mode: mode_t = 0o644)
    }

    public let processIdentifier: pid_t
    /// The write end of the child's stdin, with `.pipe`.
    public let standardInput: PipeEnd?
    /// The read end of the child's stdout, with `.pipe`.
    public let standardOutput: PipeEnd?
    /// The read end of the child's stderr, with `.pipe`.
    public let standardError: PipeEnd?

    private let exit = Locked<Int32?>(nil)

    /// Starts `executable` (an absolute path) with `arguments`. `newSession` detaches it from
    /// this program's terminal and session (the agent started in the background).
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                input: Stream = .null, output: Stream = .null, error: Stream = .null, newSession: Bool = false) throws(SystemError) {
        var ours: [PipeEnd?] = []
        var theirs: [Int32] = []
        var opened: [Int32] = []
        defer { opened.forEach { close($0) } }
        for (index, stream) in [input, output, error].enumerated() {
            switch stream {
            case .inherit:
                ours.append(nil); theirs.append(-1)
            case .null:
                let fd = open("/dev/null", O_RDWR | O_CLOEXEC)
                guard fd >= 0 else { throw SystemError("open", path: "/dev/null") }
                ours.append(nil); theirs.append(fd); opened.append(fd)
            case .file(let path, let mode):
                let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode)
                guard fd >= 0 else { throw SystemError("open", path: path) }
                ours.append(nil); theirs.append(fd); opened.append(fd)
            case .pipe:
                var fds: [Int32] = [-1, -1]
                guard csystem_pipe_cloexec(&fds) == 0 else { throw SystemError("pipe2") }
                // stdin: the child reads fds[0]; stdout/stderr: the child writes fds[1].
                let (child, parent) = index == 0 ? (fds[0], fds[1]) : (fds[1], fds[0])
                ours.append(PipeEnd(fileDescriptor: parent)); theirs.append(child); opened.append(child)
            }
        }
        processIdentifier = try Self.spawn(executable, arguments, environment: environment,
                                           descriptors: (theirs[0], theirs[1], theirs[2]), newSession: newSession)
        standardInput = ours[0]
        standardOutput = ours[1]
        standardError = ours[2]
    }

    /// `program` in the first folder of `path` (a `PATH` value; the usual folders when unset)
    /// that holds it as an executable, as an absolute path.
    public static func find(_ program: String, path: String? = ProcessEnvironment.current["PATH"]) -> String? {
        let folders = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        return folders.map { $0 + "/" + program }.first { access($0, X_OK) == 0 }
    }

    /// Starts `executable` with the given descriptors as its 0, 1, 2 (-1: inherit).
    static func spawn(_ executable: String, _ arguments: [String], environment: [String: String]?,
                      descriptors: (Int32, Int32, Int32), newSession: Bool) throws(SystemError) -> pid_t {
        let env = (environment ?? ProcessEnvironment.current).map { "\($0.key)=\($0.value)" }
        var pid: pid_t = 0
        let rc = withCStrings([executable] + arguments) { argv in
            withCStrings(env) { envp in
                csystem_spawn(&pid, executable, descriptors.0, descriptors.1, descriptors.2, newSession ? 1 : 0, argv, envp)
            }
        }
        guard rc == 0 else { throw SystemError("posix_spawn", errno: rc, path: executable) }
        return pid
    }

    /// True until the child has exited (and been reaped).
    public var isRunning: Bool { reap(blocking: false) == nil }

    /// Sends `signal` to the child, if it still runs.
    public func send(_ signal: Int32) {
        if isRunning { Glibc.kill(processIdentifier, signal) }
    }

    public func terminate() { send(SIGTERM) }

    /// Waits for the child to exit.
    public func waitUntilExit() { _ = reap(blocking: true) }

    /// Waits at most `seconds`; true when the child exited.
    public func wait(seconds: Double) -> Bool {
        let deadline = MonotonicClock.seconds() + seconds
        while MonotonicClock.seconds() < deadline {
            if !isRunning { return true }
            usleep(10_000)
        }
        return !isRunning
    }

    /// SIGTERM (after SIGCONT, in case it was stopped), then SIGKILL if it is still there after `grace` seconds.
    public func stop(grace: Double = 10) {
        guard isRunning else { return }
        Glibc.kill(processIdentifier, SIGCONT)
        Glibc.kill(processIdentifier, SIGTERM)
        if !wait(seconds: grace) { Glibc.kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }

    /// The exit code, or the number of the signal that ended it (as Foundation's `Process` gives it).
    public var terminationStatus: Int32 {
        let status = reap(blocking: true) ?? 0
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    /// True when a signal ended the child.
    public var wasSignalled: Bool {
        let status = reap(blocking: true) ?? 0
        return status & 0x7f != 0 && status & 0x7f != 0x7f
    }

    /// The raw wait status once the child exited; nil while it runs (with `blocking` false).
    private func reap(blocking: Bool) -> Int32? {
        while true {
            let done = exit.withLock { (exit: inout Int32?) -> Int32? in
                if let exit { return exit }
                var status: Int32 = 0
                let result = waitpid(processIdentifier, &status, WNOHANG)
                if result == processIdentifier { exit = status }
                // Reaped by someone else: gone, with nothing to tell.
                if result < 0 && errno == ECHILD { exit = 0 }
                return exit
            }
            if let done { return done }
            if !blocking { return nil }
            usleep(5_000)
        }
    }
}

/// Runs `body` with `strings` as a NULL-terminated C array.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return body(pointers)
}
