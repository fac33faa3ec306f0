import CSystem
import Glibc

/// What a program run to its end said.
public struct ProgramOutput: Sendable, Equatable {
    /// The exit code, or -1 when a signal ended it.
    public var status: Int32
    /// Standard output (with standard error too, when merged), up to the limit.
    public var output: String
    /// Standard error, up to the limit (empty when merged into `output`).
    public var errors: String

    public init(status: Int32, output: String, errors: String = "") {
        self.status = status; self.output = output; self.errors = errors
    }

    public var succeeded: Bool { status == 0 }
}

extension ChildProcess {
    /// Runs `executable` to its end: `input` on its stdin, stdout and stderr read together
    /// (neither pipe can fill up and stall it), each kept up to `limit` bytes. With a
    /// `timeout`, a program still running then is killed and nil returned, so a hung helper
    /// (nmcli waiting on a dead D-Bus) can never hang the caller.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                           input: String? = nil, mergeErrors: Bool = false, timeout: Duration? = nil,
                           limit: Int = 1 << 20) throws(SystemError) -> ProgramOutput? {
        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1], inPipe: [Int32] = [-1, -1]
        guard csystem_pipe_cloexec(&outPipe) == 0 else { throw SystemError("pipe2") }
        defer { close(outPipe[0]) }
        if !mergeErrors, csystem_pipe_cloexec(&errPipe) != 0 {
            close(outPipe[1])
            throw SystemError("pipe2")
        }
        defer { if errPipe[0] >= 0 { close(errPipe[0]) } }
        var null: Int32 = -1
        if input != nil {
            guard csystem_pipe_cloexec(&inPipe) == 0 else { throw SystemError("pipe2") }
        } else {
            null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        }
        let pid: pid_t
        do {
            pid = try spawn(executable, arguments, environment: environment,
                            descriptors: (input != nil ? inPipe[0] : null, outPipe[1], mergeErrors ? outPipe[1] : errPipe[1]),
                            newSession: false)
        } catch {
            for fd in [outPipe[1], errPipe[1], inPipe[0], inPipe[1], null] where fd >= 0 { close(fd) }
            throw error
        }
        for fd in [outPipe[1], errPipe[1], inPipe[0], null] where fd >= 0 { close(fd) }
        if let input {
            // Small (a password): it fits the pipe's buffer; a child that reads nothing and
            // exits makes this fail, which is no reason to fail the run.
            let stdin = PipeEnd(fileDescriptor: inPipe[1])
            stdin.write(input.utf8)
            stdin.close()
        }

        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        var streams = [(fd: outPipe[0], bytes: [UInt8](), open: true)]
        if errPipe[0] >= 0 { streams.append((fd: errPipe[0], bytes: [], open: true)) }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while streams.contains(where: \.open) {
            let wait = clock.pollTimeout(until: deadline)
            if wait == 0 { break }
            var polled = streams.map { pollfd(fd: $0.open ? $0.fd : -1, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&polled, nfds_t(polled.count), wait)
            if ready < 0 { if errno == EINTR { continue }; break }
            for i in streams.indices where streams[i].open && polled[i].revents != 0 {
                let n = read(streams[i].fd, &buffer, buffer.count)
                if n < 0 { if errno == EINTR || errno == EAGAIN { continue } }
                if n <= 0 { streams[i].open = false; continue }
                if streams[i].bytes.count < limit { streams[i].bytes += buffer[0..<min(n, limit - streams[i].bytes.count)] }
            }
        }
        // Pipes closed is not exit: give the program what is left of the deadline.
        var status: Int32 = 0
        while true {
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid { break }
            if waited < 0 && errno != EINTR { return nil }
            if let deadline, clock.now >= deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                Log.debug("\(executable) did not finish within \(timeout!); killed")
                return nil
            }
            usleep(2_000)
        }
        let exited = status & 0x7f == 0
        return ProgramOutput(status: exited ? (status >> 8) & 0xff : -1,
                             output: String(decoding: streams[0].bytes, as: UTF8.self),
                             errors: streams.count > 1 ? String(decoding: streams[1].bytes, as: UTF8.self) : "")
    }
}
