import Glibc

/// Writes to standard error and output with plain write(2), whole strings at a time.
public enum StandardStreams {
    public static func writeError(_ text: String) { writeAll(2, text) }
    public static func writeOutput(_ text: String) { writeAll(1, text) }

    static func writeAll(_ fd: Int32, _ text: String) {
        var text = text
        // A closed or full stream loses the text: there is nowhere left to say so.
        text.withUTF8 { buffer in _ = try? FileIO.write(fd, UnsafeRawBufferPointer(buffer)) }
    }

    public static var errorIsTerminal: Bool { isatty(2) == 1 }
    public static var outputIsTerminal: Bool { isatty(1) == 1 }
}
