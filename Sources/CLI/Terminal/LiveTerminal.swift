import Glibc
import Platform

/// The terminal while a live view runs: the alternate screen (the person's scrollback is left
/// as it was), no cursor, no line wrapping, keys read one at a time without echo. `leave()`
/// puts every one of these back, whatever way the view ends.
final class LiveTerminal {
    private var savedInput: termios?
    private(set) var isActive = false

    /// Nil when standard output is not a terminal.
    init?() {
        guard isatty(1) == 1 else { return nil }
    }

    /// Rows and columns of the terminal now.
    var size: (rows: Int, columns: Int) {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 {
            return (Int(size.ws_row), Int(size.ws_col))
        }
        return (24, 80)
    }

    func enter() {
        if isatty(0) == 1 {
            var current = termios()
            if tcgetattr(0, &current) == 0 {
                savedInput = current
                var raw = current
                // Keys without echo or line editing; Ctrl-C and Ctrl-Z still send their signals.
                raw.c_lflag &= ~tcflag_t(ECHO | ICANON)
                tcsetattr(0, TCSANOW, &raw)
            }
        }
        write(FramePainter.Escape.alternateScreenOn + FramePainter.Escape.cursorHidden + FramePainter.Escape.wrapOff
              + FramePainter.Escape.home + FramePainter.Escape.clearScreen)
        isActive = true
    }

    func leave() {
        guard isActive else { return }
        isActive = false
        write(FramePainter.Escape.wrapOn + FramePainter.Escape.cursorShown + FramePainter.Escape.alternateScreenOff)
        if var saved = savedInput { tcsetattr(0, TCSANOW, &saved) }
    }

    func write(_ text: String) { StandardStreams.writeOutput(text) }

    /// Waits up to `seconds` for a key or a signal on `signalFD`; returns the keys typed.
    func wait(seconds: Double, signalFD: Int32) -> [UInt8] {
        var fds = [pollfd(fd: signalFD, events: Int16(POLLIN), revents: 0)]
        let readsKeys = savedInput != nil
        if readsKeys { fds.append(pollfd(fd: 0, events: Int16(POLLIN), revents: 0)) }
        guard poll(&fds, nfds_t(fds.count), Int32(saturating: seconds * 1000)) > 0, readsKeys, fds[1].revents & Int16(POLLIN) != 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = read(0, &buffer, buffer.count)
        return n > 0 ? Array(buffer[0..<n]) : []
    }
}
