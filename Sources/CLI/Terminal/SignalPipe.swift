import CSystem
import Glibc

/// Signals as bytes on a pipe, so a loop that waits in `poll` wakes for them and handles
/// them between frames, never in the middle of one. The handler (`csystem_signal_pipe_handler`,
/// in C so that no language runtime runs inside it) only writes the signal's number, which
/// is safe in a signal handler, and puts `errno` back as it found it: the code it
/// interrupted may be about to read `errno` from a call of its own.
enum SignalPipe {
    // Written once by `install`, before any handler can run.
    nonisolated(unsafe) private static var readEnd: Int32 = -1

    /// Routes `signals` to the pipe and returns its read end (non-blocking).
    static func install(_ signals: [Int32]) -> Int32 {
        if readEnd < 0 {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { return -1 }
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
            readEnd = fds[0]
            csystem_signal_pipe_set(fds[1])
        }
        for signal in signals { handle(signal) }
        return readEnd
    }

    /// (Re)installs the handler for one signal, e.g. after it was set back to its default to stop.
    static func handle(_ signal: Int32) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = csystem_signal_pipe_handler
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(signal, &action, nil)
    }

    /// The signals that arrived since the last call, in order.
    static func drain() -> [Int32] {
        var buffer = [UInt8](repeating: 0, count: 64)
        var out: [Int32] = []
        while true {
            let n = read(readEnd, &buffer, buffer.count)
            guard n > 0 else { return out }
            out += buffer[0..<n].map { Int32($0) }
        }
    }
}
