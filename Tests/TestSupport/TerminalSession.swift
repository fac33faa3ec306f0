import Foundation
import Platform
import Glibc

/// A real terminal of a chosen size running one command, for tests that read the screen the
/// way a person sees it: a private tmux server (Debian's `tmux`) with one pane. After the
/// command ends the pane stays, showing what the command left behind and `exit=STATUS`.
public final class TerminalSession: @unchecked Sendable {
    // Sendable by construction: the fields are set in init and only read afterwards.
    public static let tmux = "/usr/bin/tmux"
    let folder = TemporaryFolder("iu-tty")
    var socket: String { folder.path + "/tmux.sock" }
    let target = "live"

    /// Starts `command` (argv words) with `environment` in a `rows` x `columns` terminal.
    public init(rows: Int, columns: Int, command: [String], environment: [String: String]) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.tmux) else {
            throw TestFailure("this test needs tmux to drive a real terminal: run `make test` (it installs tmux) or `apt-get install tmux`")
        }
        // Like an interactive shell: job control (the command gets its own process group and
        // the terminal; Ctrl-C and Ctrl-Z reach it, not the shell), and a stopped command is
        // brought back with `fg` when the test presses Enter.
        var script = "#!/bin/bash\nset -m\n"
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) where Self.passed(key) {
            script += "export \(key)=\(Self.quoted(value))\n"
        }
        script += command.map(Self.quoted).joined(separator: " ") + "\n" + """
            status=$?
            while jobs %1 >/dev/null 2>&1; do
                echo "stopped: press Enter to continue"
                read -r _
                fg %1 >/dev/null
                status=$?
            done
            echo "exit=$status"
            exec sleep 600

            """
        let path = try folder.file("run.sh", bytes: Array(script.utf8))
        chmod(path, 0o700)
        // The tmux server outlives this call and keeps what it inherits: its standard streams
        // go to /dev/null (pipes would never reach their end), and it gets an empty signal
        // mask and default handlers (Foundation's Process blocks signals in its children, and
        // a server that cannot see SIGTERM or SIGHUP never ends).
        let arguments = [Self.tmux, "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", target,
                         "-x", String(columns), "-y", String(rows), path]
        let status = Self.spawnAndWait(arguments)
        guard status == 0 else { throw TestFailure("tmux could not start a session (status \(status))") }
    }

    deinit {
        _ = Self.spawnAndWait([Self.tmux, "-S", socket, "kill-server"])
    }

    /// Runs `arguments` with /dev/null as its streams and returns its exit status.
    static func spawnAndWait(_ arguments: [String]) -> Int32 {
        guard let child = try? ChildProcess(arguments[0], Array(arguments.dropFirst())) else { return -1 }
        return child.terminationStatus
    }

    /// The variables a command needs to find the person's files; the rest of the test
    /// runner's environment stays out of the terminal.
    static func passed(_ key: String) -> Bool {
        key == "HOME" || key == "PATH" || key == "LANG" || key.hasPrefix("XDG_") || key.hasPrefix("LC_")
    }

    static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
        let r = try Shell.capture(Self.tmux, ["-S", socket] + arguments)
        guard r.status == 0 else { throw TestFailure("tmux \(arguments.joined(separator: " ")) failed (\(r.status)): \(r.stderr)") }
        return r.stdout
    }

    /// Every row of the screen as shown now, trailing blanks removed, one entry per row.
    public func screen() throws -> [String] {
        let text = try tmux(["capture-pane", "-p", "-t", target])
        var rows = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        if rows.last == "" { rows.removeLast() }
        return rows
    }

    /// A tmux format for the pane, e.g. `#{cursor_flag}`.
    public func value(_ format: String) throws -> String {
        try tmux(["display-message", "-p", "-t", target, format]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Keys as tmux names them: `C-c`, `q`, `Enter`.
    public func send(_ keys: String...) throws { try tmux(["send-keys", "-t", target] + keys) }

    /// Changes the terminal's size, as a person dragging the window would (SIGWINCH).
    public func resize(rows: Int, columns: Int) throws {
        try tmux(["resize-window", "-t", target, "-x", String(columns), "-y", String(rows)])
    }

    /// Waits until the screen satisfies `condition`, and returns it; fails with the last screen.
    @discardableResult
    public func waitFor(_ what: String, timeout: Double = 20, _ condition: ([String]) -> Bool) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var last: [String] = []
        while true {
            last = try screen()
            if condition(last) { return last }
            if Date() >= deadline { break }
            usleep(100_000)
        }
        throw TestFailure("timed out waiting for \(what); the screen:\n" + last.joined(separator: "\n"))
    }
}
