import Glibc

/// Leveled logging to stderr. Under systemd (`JOURNAL_STREAM` set) lines carry the
/// `<N>` priority prefix journald understands. Never log secrets or URLs with credentials:
/// use `Log.redact(url:)` for anything that came from configuration or a server.
public enum Log {
    public enum Level: Int, Sendable, Comparable {
        case error = 3, warning = 4, info = 6, debug = 7
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var name: String {
            switch self { case .error: "error"; case .warning: "warning"; case .info: "info"; case .debug: "debug" }
        }
    }

    private static let settings = Locked<(level: Level, journal: Bool)>(
        (level: ProcessEnvironment.current["INSTANT_UPLOAD_DEBUG"] != nil ? .debug : .info,
         journal: ProcessEnvironment.current["JOURNAL_STREAM"] != nil))

    public static func setLevel(_ level: Level) { settings.withLock { $0.level = level } }

    public static func error(_ message: @autoclosure () -> String) { write(.error, message()) }
    public static func warning(_ message: @autoclosure () -> String) { write(.warning, message()) }
    public static func info(_ message: @autoclosure () -> String) { write(.info, message()) }
    public static func debug(_ message: @autoclosure () -> String) { write(.debug, message()) }

    static func write(_ level: Level, _ message: String) {
        let (threshold, journal) = settings.withLock { ($0.level, $0.journal) }
        guard level <= threshold else { return }
        // Names from disk or a server reach log lines; none may forge a line or move the cursor.
        let message = DisplayText.escapeControls(message)
        let line: String
        if journal {
            line = "<\(level.rawValue)>" + message + "\n"
        } else {
            line = "instant-upload[\(getpid())] \(level.name): " + message + "\n"
        }
        StandardStreams.writeError(line)
    }

    /// A URL as it may appear in a log: no user info, no query string.
    public static func redact(url: String) -> String {
        var s = url
        if let q = s.firstIndex(where: { $0 == "?" || $0 == "#" }) { s = String(s[..<q]) }
        if let scheme = s.firstRange(of: "://") {
            let rest = s[scheme.upperBound...]
            let hostEnd = rest.firstIndex(of: "/") ?? rest.endIndex
            if let at = rest[..<hostEnd].lastIndex(of: "@") {
                s = String(s[..<scheme.upperBound]) + String(rest[rest.index(after: at)...])
            }
        }
        return s
    }
}
