import Glibc
import Platform

/// The systemd user unit that runs the agent: where it lives, what it says, and the
/// `systemctl --user` calls that enable, start and stop it.
///
/// Everything follows the environment it is given (`XDG_CONFIG_HOME`, `XDG_RUNTIME_DIR`,
/// `PATH`), so tests point it at temporary folders.
public struct UserService: Sendable {
    public static let unitName = "instant-upload.service"

    public var paths: XDGPaths

    public init(paths: XDGPaths) { self.paths = paths }

    /// `$XDG_CONFIG_HOME/systemd/user`: the folder systemd reads the person's own units from.
    public var unitDirectory: String {
        // `configDirectory` is `$XDG_CONFIG_HOME/instant-upload`, with the spec's fallbacks applied.
        LocalPath(paths.configDirectory).parent.text + "/systemd/user"
    }

    public var unitPath: String { unitDirectory + "/" + Self.unitName }

    /// The link `systemctl --user enable` makes; its presence is what "enabled" means.
    public var enablementLink: String { unitDirectory + "/default.target.wants/" + Self.unitName }

    public var isInstalled: Bool { FileIO.exists(unitPath) }

    public var isEnabled: Bool {
        var st = stat()
        return lstat(enablementLink, &st) == 0
    }

    /// The unit for an agent at `executable` (an absolute path).
    public static func unitText(executable: String) -> String {
        """
        # Written by `instant-upload service install`; `instant-upload service uninstall` removes it.
        [Unit]
        Description=instant-upload agent: uploads your files to your own server

        [Service]
        Type=simple
        ExecStart=\(execStartPath(executable)) run
        Restart=on-failure
        RestartSec=5
        # The agent writes to stderr; with JOURNAL_STREAM set it prefixes journald's <N> levels.
        StandardOutput=journal
        StandardError=journal
        SyslogIdentifier=instant-upload

        [Install]
        WantedBy=default.target

        """
    }

    /// The executable as `ExecStart=` reads it: `%` starts a specifier and spaces would split
    /// the path, so `%` is doubled and such a path is quoted. `$` stays as it is: systemd
    /// expands variables in the arguments, not in the program's path (`systemd-analyze
    /// verify` shows `$$` there literally).
    public static func execStartPath(_ path: String) -> String {
        let escaped = path.replacing("%", with: "%%")
        return path.contains(where: \.isWhitespace) ? "\"" + escaped + "\"" : escaped
    }

    /// Why systemd would refuse to start a program at `path`, or nil when it can.
    /// systemd rejects executable paths with quotes, backslashes or control characters
    /// ("Executable name contains special characters"), however they are escaped.
    public static func problem(withExecutable path: String) -> String? {
        guard path.hasPrefix("/") else { return "\(path) is not an absolute path" }
        if path.unicodeScalars.contains(where: { $0 == "\"" || $0 == "'" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7f }) {
            return "systemd cannot start a program whose path contains quotes, backslashes or control characters: \(DisplayText.escape(path))"
        }
        return nil
    }

    /// The executable an installed unit starts, read back from its `ExecStart=`.
    public var installedExecutable: String? {
        guard let text = try? FileIO.readSmallFile(unitPath) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("ExecStart=") {
            var value = String(line.dropFirst("ExecStart=".count))
            if value.hasSuffix(" run") { value = String(value.dropLast(" run".count)) }
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value.replacing("%%", with: "%")
        }
        return nil
    }

    /// What writing the unit changed.
    public enum WriteOutcome: Sendable, Equatable { case created, updated, unchanged }

    /// Writes the unit for `executable`, atomically, readable by the person's systemd.
    /// Check `problem(withExecutable:)` first: some paths no unit can start.
    public func writeUnit(executable: String) throws(SystemError) -> WriteOutcome {
        let text = Self.unitText(executable: executable)
        let before = try? FileIO.readSmallFile(unitPath)
        if before == text { return .unchanged }
        try FileIO.makeDirectory(unitDirectory, mode: 0o755)
        try FileIO.writeAtomically(unitPath, Array(text.utf8), mode: 0o644)
        return before == nil ? .created : .updated
    }

    /// Removes the unit and its enablement link; false when there was no unit.
    public func removeUnit() throws(SystemError) -> Bool {
        let existed = isInstalled
        if isEnabled { try valueOrErrno("unlink", path: enablementLink) { unlink(enablementLink) } }
        if existed { try valueOrErrno("unlink", path: unitPath) { unlink(unitPath) } }
        return existed
    }

    // MARK: systemd

    /// Whether a systemd user manager runs for this session, and if not, why.
    public enum Availability: Sendable, Equatable {
        case available(systemctl: String)
        case unavailable(reason: String)
    }

    /// A user manager answers on `$XDG_RUNTIME_DIR/systemd/private`; that socket, and
    /// `systemctl` on the PATH, are what `systemctl --user` needs.
    public var availability: Availability {
        guard let runtime = paths.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else {
            return .unavailable(reason: "XDG_RUNTIME_DIR is not set, so there is no user session manager")
        }
        let socket = runtime + "/systemd/private"
        var st = stat()
        guard stat(socket, &st) == 0, st.st_mode & S_IFMT == S_IFSOCK else {
            return .unavailable(reason: "no systemd user manager is running, nothing listens at \(socket)")
        }
        guard let systemctl = Self.find("systemctl", path: paths.environment["PATH"]) else {
            return .unavailable(reason: "systemctl is not installed")
        }
        return .available(systemctl: systemctl)
    }

    /// What `systemctl --user ARGS` said.
    public struct SystemctlResult: Sendable {
        public var status: Int32
        public var output: String
        public var succeeded: Bool { status == 0 }
    }

    /// Runs `systemctl --user ARGS` in the service's environment.
    public func systemctl(_ systemctl: String, _ arguments: [String]) -> SystemctlResult {
        do {
            let finished = try ChildProcess.run(systemctl, ["--user", "--no-pager"] + arguments, environment: paths.environment,
                                                mergeErrors: true)
            return SystemctlResult(status: finished?.status ?? -1,
                                   output: (finished?.output ?? "").trimmingWhitespace())
        } catch {
            return SystemctlResult(status: 127, output: "cannot run \(systemctl): \(error)")
        }
    }

    static func find(_ program: String, path: String?) -> String? {
        let folders = (path ?? "").split(separator: ":").map(String.init) + ["/usr/bin", "/bin"]
        return folders.map { $0 + "/" + program }.first { access($0, X_OK) == 0 }
    }
}
