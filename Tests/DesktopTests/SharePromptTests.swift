import Foundation
import Platform
import Glibc
import Testing
import TestSupport

/// `share-to` without `--to` and without a display: the picker asks on the terminal.
/// tmux gives it a real terminal; the test reads the screen and types as a person would.
@Suite("share-to's folder picker on a terminal", .serialized)
struct SharePromptTests {
    /// A tmux server of the test's own (its own socket), running one command in a pane.
    final class Terminal: @unchecked Sendable {
        // Sendable by construction: set once in init.
        let socket = "iu-test-\(getpid())-\(UInt32.random(in: 0..<UInt32.max))"
        let folder = TemporaryFolder("iu-tmux")
        private(set) var serverPID: Int32 = 0
        private(set) var panePID: Int32 = 0

        init(command: [String], environment: [String: String]) throws {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
                throw TestFailure("/usr/bin/tmux is missing: `make test` installs tmux")
            }
            // The pane runs a script: its environment is the session's, whatever the tmux server had.
            var script = "#!/bin/sh\n"
            for (key, value) in environment.sorted(by: { $0.key < $1.key }) where key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
                script += "export \(key)='\(value.replacingOccurrences(of: "'", with: "'\\''"))'\n"
            }
            script += "unset DISPLAY WAYLAND_DISPLAY\n"
            script += command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            script += "\necho \"EXIT=$?\"\nsleep 600\n"
            try folder.file("run.sh", bytes: Array(script.utf8))
            chmod(folder.path + "/run.sh", 0o755)
            // The tmux server outlives the command that starts it and keeps every descriptor it
            // inherits: it starts with nothing open but /dev/null (ChildProcess passes nothing else).
            let start = try ChildProcess("/usr/bin/tmux", ["-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "50",
                                                           folder.path + "/run.sh"])
            guard start.terminationStatus == 0 else { throw TestFailure("tmux new-session failed (\(start.terminationStatus))") }
            let pids = try tmux(["display-message", "-p", "#{pid} #{pane_pid}"]).split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            serverPID = pids.first ?? 0
            panePID = pids.last ?? 0
        }

        deinit {
            // `kill-server` is not always the end of it here; the pane's process group and the
            // server are ended by their ids.
            if panePID > 0 { kill(-panePID, SIGKILL) }
            if serverPID > 0 { kill(serverPID, SIGKILL) }
            unlink("/tmp/tmux-\(getuid())/\(socket)")
        }

        @discardableResult
        func tmux(_ arguments: [String]) throws -> String {
            try Shell.run("/usr/bin/tmux", ["-L", socket] + arguments)
        }

        var screen: String { (try? tmux(["capture-pane", "-p", "-J"])) ?? "" }

        func waitFor(_ text: String, timeout: Double = 30) throws {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                if screen.contains(text) { return }
                if Date() >= deadline { break }
                usleep(100_000)
            }
            throw TestFailure("the terminal never showed \"\(text)\"; it shows:\n\(screen)")
        }

        func type(_ keys: String) throws {
            try tmux(["send-keys", "-l", keys])
            try tmux(["send-keys", "Enter"])
        }
    }

    @Test("pick a recent folder by its number on the terminal; the files arrive there")
    func recentOnTerminal() throws {
        let server = try ReferenceServer()
        try server.makeFolder("Reports/2026")
        try server.makeFolder("Other")
        let session = try AgentHarness()
        try session.addAccount(server)
        // An earlier share makes /Reports/2026 a recent folder.
        let earlier = try session.home.file("desk/earlier.txt", bytes: Array("earlier".utf8))
        let r = try session.shareTo(["--to", "/Reports/2026", earlier])
        try #require(r.status == 0, "\(r.stderr)")
        // A terminal without a desktop session is normal: nothing said about notifications.
        #expect(!r.stderr.contains("notification"), "\(r.stderr)")
        try session.startAgent()
        let file = try session.home.file("desk/summary.txt", bytes: Array("summary".utf8))
        let other = try session.home.file("desk/notes.txt", bytes: Array("notes".utf8))

        let terminal = try Terminal(command: [Repository.binaries + "/share-to", file, other], environment: session.environment)
        try terminal.waitFor("Number (q to cancel):")
        let screen = terminal.screen
        #expect(screen.contains("Send 2 files to home: /"), "\(screen)")
        #expect(screen.contains("1) Recent: /Reports/2026"), "\(screen)")
        #expect(screen.contains("Other/"), "the server's folders are listed below: \(screen)")
        try terminal.type("1")
        try terminal.waitFor("EXIT=0")
        #expect(terminal.screen.contains("queued 2 files for home:/Reports/2026"), "\(terminal.screen)")
        try session.waitForAll("completed", count: 3)
        #expect(try String(contentsOfFile: server.tree() + "/Reports/2026/summary.txt", encoding: .utf8) == "summary")
        #expect(try String(contentsOfFile: server.tree() + "/Reports/2026/notes.txt", encoding: .utf8) == "notes")
    }

    @Test("on the terminal: a wrong answer is asked again, q cancels, nothing is queued, exit 1")
    func cancelOnTerminal() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        let file = try session.home.file("desk/a.txt", bytes: [1])
        let terminal = try Terminal(command: [Repository.binaries + "/share-to", file], environment: session.environment)
        try terminal.waitFor("Number (q to cancel):")
        try terminal.type("99")
        try terminal.waitFor("Type a number from 1 to 2, or q to cancel.")
        try terminal.type("q")
        try terminal.waitFor("EXIT=1")
        #expect(try session.items().isEmpty)
    }

    @Test("no display and no terminal: share-to asks for --to in words and exits 2, queueing nothing")
    func nowhereToAsk() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        session.environment["DISPLAY"] = nil
        session.environment["WAYLAND_DISPLAY"] = nil
        let file = try session.home.file("desk/a.txt", bytes: [1])
        let r = try session.shareTo([file])
        #expect(r.status == 2)
        #expect(r.stderr.contains("no display to show the folder picker on and no terminal to ask on: give the folder with --to DIR"), "\(r.stderr)")
        #expect(try session.items().isEmpty)
    }
}

extension SharePromptTests {
    @Test("a display that cannot be reached: share-to says the picker could not be shown, exits 3, queues nothing")
    func unreachableDisplay() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        session.environment["DISPLAY"] = ":9999"
        let file = try session.home.file("desk/a.txt", bytes: [1])
        let r = try session.shareTo([file])
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.contains("zenity could not show the folder picker"), "\(r.stderr)")
        #expect(r.stderr.contains("give the folder with --to DIR instead"), "\(r.stderr)")
        #expect(try session.items().isEmpty)
    }
}
