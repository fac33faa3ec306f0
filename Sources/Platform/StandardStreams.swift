import Glibc

/// Writes to standard error and output with plain write(2), whole strings at a time.
public enum StandardStreams {
    public static func writeError(_ text: String) { writeAll(2, text) }
    public static func writeOutput(_ text: String) { writeAll(1, text) }

    static func writeAll(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 { if errno == EINTR { continue }; return }
                offset += n
            }
        }
    }

    public static var errorIsTerminal: Bool { isatty(2) == 1 }
    public static var outputIsTerminal: Bool { isatty(1) == 1 }
}
