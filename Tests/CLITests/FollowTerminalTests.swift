import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing

/// `queue --follow` in a real terminal (tmux) and into a pipe, and the password prompt, through the real binary.
@Suite("In a real terminal: queue --follow and the password prompt")
struct FollowTerminalTests {
    /// A session whose queue holds `count` uploads waiting, and no agent.
    func session(queued count: Int) throws -> (AgentHarness, QueueStore, [Int64]) {
        let session = try AgentHarness()
        let store = try QueueStore(path: session.databasePath)
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:9/dav/", tusURL: "http://127.0.0.1:9/files/",
                                           username: "alice")
        let ids = try store.enqueue((0..<count).map {
            NewTransfer(direction: .upload, origin: .manual, accountID: account.id, localPath: LocalPath("/pictures/IMG_\($0).jpg"),
                        remotePath: "/Photos/IMG_\($0).jpg", bytesTotal: 1_000_000)
        })
        return (session, store, ids)
    }

    func follow(_ session: AgentHarness, rows: Int = 24, columns: Int = 80) throws -> TerminalSession {
        try TerminalSession(rows: rows, columns: columns, command: [Repository.binaries + "/instant-upload", "queue", "--follow"],
                            environment: session.environment)
    }

    @Test("300 waiting rows in a 24-line terminal: the status line stays on top, the rest is counted, nothing scrolls")
    func fitsTheScreen() throws {
        let (session, store, ids) = try session(queued: 300)
        try store.start(ids[0], resumedAt: 0)
        try store.progress(ids[0], bytesDone: 250_000)
        try store.start(ids[1], resumedAt: 0)
        try store.fail(ids[1], reason: Reason(.quota))
        let terminal = try follow(session)
        let screen = try terminal.waitFor("the live view") { $0.contains { $0.hasSuffix(" more waiting") } }
        #expect(screen.count == 24)
        #expect(screen[0] == "1 uploading, 298 waiting, 1 failed; 0 of 300 files, 250 kB of 300 MB", "\(screen)")
        #expect(screen.contains("In progress (1)") && screen.contains("Failed (1)") && screen.contains("Queued (298)"))
        let more = try #require(screen.first { $0.hasSuffix(" more waiting") })
        let shown = screen.filter { $0.contains("waiting its turn") }.count
        #expect(more == "  … and \(298 - shown) more waiting")
        #expect(try terminal.value("#{alternate_on} #{history_size}") == "1 0", "on the alternate screen, nothing scrolled")

        // Work arriving while it runs: the view follows, still within 24 lines.
        try store.enqueue([NewTransfer(direction: .upload, origin: .manual, accountID: 1, localPath: LocalPath("/pictures/late.jpg"),
                                       remotePath: "/Photos/late.jpg", bytesTotal: 5)])
        let later = try terminal.waitFor("the new row counted") { $0.first?.contains("299 waiting") == true }
        #expect(later.count == 24)
        #expect(later.contains("Queued (299)"))
    }

    @Test("when a row's text gets shorter, nothing of the longer text is left on screen")
    func noStaleText() throws {
        let (session, store, ids) = try session(queued: 2)
        let long = "the server is busy with a very long explanation that fills the line to its end"
        try store.noteWaiting(ids[0], Reason(.serverBusy, long))
        let terminal = try follow(session)
        try terminal.waitFor("the long reason") { $0.contains { $0.contains("fills the line") } }
        try store.noteWaiting(ids[0], nil)
        let screen = try terminal.waitFor("the short line") { $0.contains("     waiting its turn (#1)") }
        for fragment in ["fills", "explanation", "to its end", "server is busy"] {
            #expect(!screen.contains { $0.contains(fragment) }, "stale `\(fragment)`:\n\(screen.joined(separator: "\n"))")
        }
        // A shorter frame clears what the longer one had below it.
        for id in ids { try store.remove(id, by: .cancel) }
        let empty = try terminal.waitFor("an empty queue") { $0.first == "nothing queued" }
        #expect(empty.filter { !$0.isEmpty } == ["nothing queued", "the agent is not running: start it with `instant-upload run`"],
                "\(empty)")
    }

    @Test("a resized terminal gets a frame of its new size at once")
    func resize() throws {
        let (session, _, _) = try session(queued: 100)
        let terminal = try follow(session, rows: 30, columns: 100)
        try terminal.waitFor("the first frame") { $0.contains { $0.hasSuffix(" more waiting") } }
        try terminal.resize(rows: 12, columns: 50)
        // tmux keeps the bottom of the old frame when it shrinks the window, "more waiting"
        // included; the new frame is the one that starts with the headline again.
        let headline = "100 waiting; 0 of 100 files, 0 B of 100 MB"
        let small = try terminal.waitFor("a 12-line frame") { screen in
            screen.count == 12 && screen.first == headline && screen.contains { $0.hasSuffix(" more waiting") }
        }
        for line in small { #expect(line.count <= 50, "\(line)") }
        let shown = small.filter { $0.contains("waiting its turn") }.count
        #expect(small.contains("  … and \(100 - shown) more waiting"))
    }

    @Test("Ctrl-C ends it with status 0 and gives the terminal back: main screen, cursor shown, wrapping on, no frame left")
    func ctrlC() throws {
        let (session, _, _) = try session(queued: 50)
        let terminal = try follow(session)
        try terminal.waitFor("the live view") { $0.contains("Queued (50)") }
        #expect(try terminal.value("#{alternate_on} #{cursor_flag} #{wrap_flag}") == "1 0 0")
        try terminal.send("C-c")
        let after = try terminal.waitFor("the command to end") { $0.contains("exit=0") }
        #expect(try terminal.value("#{alternate_on} #{cursor_flag} #{wrap_flag}") == "0 1 1")
        #expect(!after.contains { $0.contains("Queued") || $0.contains("waiting its turn") }, "\(after)")
    }

    @Test("Ctrl-Z gives the terminal back while stopped; on continuing, the view is drawn again whole")
    func suspend() throws {
        let (session, _, _) = try session(queued: 20)
        let terminal = try follow(session)
        try terminal.waitFor("the live view") { $0.contains("Queued (20)") }
        try terminal.send("C-z")
        let stopped = try terminal.waitFor("the shell's screen") { $0.contains("stopped: press Enter to continue") }
        #expect(!stopped.contains("Queued (20)"), "\(stopped)")
        #expect(try terminal.value("#{alternate_on} #{cursor_flag} #{wrap_flag}") == "0 1 1")
        try terminal.send("Enter")  // fg
        try terminal.waitFor("the view again") { $0.contains("Queued (20)") && $0.contains { $0.hasPrefix("  #1 ") } }
        #expect(try terminal.value("#{alternate_on} #{cursor_flag}") == "1 0")
        try terminal.send("q")
        try terminal.waitFor("the command to end") { $0.contains("exit=0") }
    }

    @Test("the password prompt names the user and the host it is for, and echoes nothing typed")
    func passwordPrompt() throws {
        let session = try AgentHarness()
        let terminal = try TerminalSession(rows: 10, columns: 100, command: [Repository.binaries + "/instant-upload", "account", "add",
                                                                             "http://127.0.0.1:9", "--user", "alice"],
                                           environment: session.environment)
        try terminal.waitFor("the prompt") { $0.contains("Password for alice at 127.0.0.1:") }
        try terminal.send("secret-words")
        usleep(300_000)
        #expect(!(try terminal.screen()).contains { $0.contains("secret-words") }, "the password is not echoed")
        try terminal.send("Enter")
        let after = try terminal.waitFor("the check to fail") { $0.contains { $0.hasPrefix("exit=") } }
        #expect(after.contains("exit=3"), "nothing listens there: \(after)")
        #expect(!after.contains { $0.contains("secret-words") })
    }

    @Test("into a pipe: the status once, then one plain line per change, and exit 0 on SIGINT")
    func pipe() throws {
        let (session, store, ids) = try session(queued: 3)
        let process = try ChildProcess(Repository.binaries + "/instant-upload", ["queue", "--follow"], environment: session.environment,
                                       output: .pipe)
        let reader = LineReader(process.standardOutput!)
        let first = try reader.next(timeout: 15)
        #expect(first == "3 waiting; 0 of 3 files, 0 B of 3.0 MB")
        try store.start(ids[0], resumedAt: 0)
        try store.progress(ids[0], bytesDone: 500_000)
        let moving = try reader.next(timeout: 15, matching: { $0.contains("#\(ids[0]) ") })
        #expect(moving.hasSuffix("#\(ids[0]) IMG_0.jpg: uploading, 50%, 500 kB of 1.0 MB"), "\(moving)")
        try store.complete(ids[0], sha256: nil, bytes: 1_000_000)
        let done = try reader.next(timeout: 15, matching: { $0.contains("#\(ids[0]) ") })
        #expect(done.hasSuffix("#\(ids[0]) IMG_0.jpg: uploaded as home:/Photos/IMG_0.jpg"), "\(done)")
        process.send(SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(!reader.all.contains("\u{1b}"), "no terminal codes in a pipe")
    }
}

/// Reads lines from a child's output as they come.
final class LineReader: @unchecked Sendable {
    // Sendable by construction: `lines` and `buffer` are only touched under `lock`.
    private let lock = NSCondition()
    private var lines: [String] = []
    private var buffer = ""
    private(set) var all = ""

    init(_ pipe: PipeEnd) {
        Thread { [weak self] in
            while true {
                let data = pipe.availableData
                guard let self, !data.isEmpty else { return }
                self.lock.lock()
                let text = String(decoding: data, as: UTF8.self)
                self.all += text
                self.buffer += text
                while let newline = self.buffer.firstIndex(of: "\n") {
                    self.lines.append(String(self.buffer[..<newline]))
                    self.buffer = String(self.buffer[self.buffer.index(after: newline)...])
                }
                self.lock.broadcast()
                self.lock.unlock()
            }
        }.start()
    }

    /// The next line (or, for the first, the status lines joined) that `matching` accepts.
    func next(timeout: Double, matching: (String) -> Bool = { _ in true }) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let index = lines.firstIndex(where: matching) {
                let line = lines[index]
                lines.removeSubrange(...index)
                return line
            }
            guard lock.wait(until: deadline) else { throw TestFailure("no matching line within \(timeout) s; so far:\n\(all)") }
        }
    }
}
