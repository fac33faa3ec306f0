import Desktop
import Foundation
import Platform
import Queue
import TestSupport
import Testing

/// The README's exit-status table, one test per row, through the real binaries: 0 fine,
/// 1 needs you, 2 the command line was wrong, 3 the environment is in the way.
@Suite("Exit statuses as the README states them")
struct ExitStatusTests {
    /// A session with `accounts` added straight to its queue (no server behind them).
    func session(accounts: [String] = ["home"]) throws -> (AgentHarness, QueueStore) {
        let session = try AgentHarness()
        let store = try QueueStore(path: session.databasePath)
        for name in accounts {
            try store.addAccount(name: name, webdavURL: "http://127.0.0.1:9/dav/", tusURL: "http://127.0.0.1:9/files/", username: "alice")
            // A stored password, so the agent tries (and meets nothing on port 9).
            _ = try SecretStore(paths: XDGPaths(environment: session.environment)).save(account: name, password: "wonderland") { _ in true }
        }
        return (session, store)
    }

    func expect(_ session: AgentHarness, _ arguments: [String], _ status: Int32, stdin: String? = nil,
                saying words: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try session.cli(arguments, stdin: stdin)
        #expect(r.status == status, "\(arguments) exited \(r.status): \(r.stdout) \(r.stderr)", sourceLocation: sourceLocation)
        if let words {
            #expect((r.stdout + r.stderr).contains(words), "\(arguments): \(r.stdout) \(r.stderr)", sourceLocation: sourceLocation)
        }
    }

    @Test("upload and share-to: 0 queued, 1 a file refused or no account yet, 2 a wrong command line or account, 3 a broken config")
    func upload() throws {
        let (session, store) = try session(accounts: [])
        let file = try session.home.file("in/a.jpg", bytes: [1])
        try expect(session, ["upload", "--to", "/X", file], 1, saying: "no account yet")
        try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:9/dav/", tusURL: "http://127.0.0.1:9/files/", username: "alice")
        try expect(session, ["upload", "--to", "/X", file], 0, saying: "queued 1 file for home:/X (#")
        try expect(session, ["upload", "--to", "/X", session.home.path + "/in/gone.jpg"], 1, saying: "no such file")
        try expect(session, ["upload", "--to", "/X", "--account", "hoem", file], 2, saying: "did you mean home?")
        try expect(session, ["upload", "--to", "/../X", file], 2, saying: "has `..` in it")
        try expect(session, ["upload", file], 2, saying: "missing --to REMOTE_DIR")
        let share = try session.shareTo(["--to", "/X", "--account", "nobody", file])
        #expect(share.status == 2, "\(share.stderr)")
        try store.addAccount(name: "work", webdavURL: "http://127.0.0.1:9/dav/", tusURL: "http://127.0.0.1:9/files/", username: "bob")
        try expect(session, ["upload", "--to", "/X", file], 2, saying: "choose one with --account")
        try session.writeConfig("[transfers]\nuploads = many\n")
        try expect(session, ["upload", "--to", "/X", "--account", "home", file], 3, saying: "config.ini")
    }

    @Test("download: 0 queued (and the ids said), 1 missing or a folder, 2 an unknown account, 3 the server unreachable")
    func download() throws {
        let server = try ReferenceServer()
        try server.makeFolder("Docs")
        try Data("report".utf8).write(to: URL(fileURLWithPath: server.tree() + "/Docs/r.pdf"))
        let session = try AgentHarness()
        try session.addAccount(server)
        try expect(session, ["download", "/Docs/r.pdf"], 0, saying: "queued 1 download into ")
        let ids = try session.items().compactMap { $0["id"] as? Int }
        try expect(session, ["download", "/Docs/r.pdf"], 0, saying: "(#\((ids.max() ?? 0) + 1))")
        try expect(session, ["download", "/Docs/nothing.pdf"], 1, saying: "does not exist")
        try expect(session, ["download", "/Docs"], 1, saying: "is a folder")
        try expect(session, ["download", "--account", "elsewhere", "/Docs/r.pdf"], 2, saying: "no account named elsewhere")
        server.stop()
        try expect(session, ["download", "/Docs/r.pdf"], 3, saying: "cannot reach the server")
    }

    @Test("status and queue: 0 nothing needs you, 1 a failed item or work waiting with no agent, 2 a wrong option")
    func statusAndQueue() throws {
        let (session, store) = try session()
        for command in [["status"], ["queue"], ["status", "--json"], ["queue", "--json"]] { try expect(session, command, 0) }
        let ids = try store.enqueue([NewTransfer(direction: .upload, origin: .manual, accountID: 1, localPath: LocalPath("/a"),
                                                 remotePath: "/a", bytesTotal: 1)])
        try expect(session, ["status"], 1, saying: "the agent is not running")
        try expect(session, ["queue"], 1, saying: "the agent is not running")
        try expect(session, ["status", "--json"], 1)
        try store.start(ids[0], resumedAt: 0)
        try store.fail(ids[0], reason: Reason(.quota))
        try expect(session, ["status"], 1, saying: "1 failed")
        try expect(session, ["queue", "--json"], 1)
        try store.clear(.failed)
        try expect(session, ["status"], 0)
        try expect(session, ["queue", "--state", "sideways"], 2)
        try expect(session, ["status", "--verbose"], 2)
    }

    @Test("status exits 0 while an agent works on what waits, and names that agent")
    func statusWithAgent() throws {
        let (session, _) = try session()
        let file = try session.home.file("in/a.jpg", bytes: [1])
        try expect(session, ["upload", "--to", "/X", file], 0)
        try expect(session, ["status"], 1, saying: "the agent is not running")
        // Nothing listens on the account's port: the row retries, which is the agent's to handle.
        try session.startAgent()
        try session.waitFor("the row to retry") { $0.first?["state"] as? String == "retrying" }
        let r = try session.cli(["status", "--json"])
        #expect(r.status == 0, "\(r.stdout)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["agent_pid"] as? Int == Int(session.agentPID ?? -1))
    }

    @Test("show: 0 shown, 1 no such item, 2 not a number")
    func show() throws {
        let (session, store) = try session()
        let ids = try store.enqueue([NewTransfer(direction: .upload, origin: .manual, accountID: 1, localPath: LocalPath("/a"), remotePath: "/a")])
        try expect(session, ["show", String(ids[0])], 0)
        try expect(session, ["show", "99"], 1, saying: "there is no transfer #99")
        try expect(session, ["show", "x"], 2)
    }

    @Test("retry: 0 queued again or already on its way, 1 unknown or already completed, 2 IDs and --all-failed together")
    func retry() throws {
        let (session, store) = try session()
        let ids = try store.enqueue((0..<3).map {
            NewTransfer(direction: .upload, origin: .manual, accountID: 1, localPath: LocalPath("/nonexistent/\($0)"), remotePath: "/\($0)")
        })
        try store.start(ids[0], resumedAt: 0)
        try store.complete(ids[0], sha256: nil, bytes: 0)
        try store.start(ids[1], resumedAt: 0)
        try store.fail(ids[1], reason: Reason(.serverError))
        try expect(session, ["retry", String(ids[0])], 1, saying: "is already completed, so there is nothing to retry")
        try expect(session, ["retry", String(ids[2])], 0, saying: "#\(ids[2]) 2: already queued")
        try expect(session, ["retry", "99"], 1, saying: "there is no transfer #99")
        // A failed item whose file is gone stays failed, and says why.
        try expect(session, ["retry", String(ids[1])], 1, saying: "cannot retry")
        try expect(session, ["retry", "--all-failed", String(ids[1])], 2)
        try expect(session, ["retry"], 2)
    }

    @Test("cancel: 0 cancelled, 1 unknown or completed, 2 no ID")
    func cancel() throws {
        let (session, store) = try session()
        let ids = try store.enqueue((0..<2).map {
            NewTransfer(direction: .upload, origin: .manual, accountID: 1, localPath: LocalPath("/f\($0)"), remotePath: "/f\($0)")
        })
        try store.start(ids[1], resumedAt: 0)
        try store.complete(ids[1], sha256: nil, bytes: 0)
        try expect(session, ["cancel", String(ids[0])], 0, saying: "cancelled #\(ids[0])")
        try expect(session, ["cancel", String(ids[1])], 1, saying: "already completed")
        try expect(session, ["cancel", "99"], 1, saying: "#99")
        try expect(session, ["cancel"], 2)
    }

    @Test("pause and resume: 0 done or already so, 1 unknown, completed or failed, 2 neither IDs nor --all or both")
    func pauseAndResume() throws {
        let (session, store) = try session()
        let ids = try store.enqueue((0..<3).map {
            NewTransfer(direction: .upload, origin: .manual, accountID: 1, localPath: LocalPath("/f\($0)"), remotePath: "/f\($0)")
        })
        try store.start(ids[0], resumedAt: 0)
        try store.complete(ids[0], sha256: nil, bytes: 0)
        try store.start(ids[1], resumedAt: 0)
        try store.fail(ids[1], reason: Reason(.quota))
        let id = String(ids[2])
        try expect(session, ["pause", id], 0, saying: "paused #\(id); `instant-upload resume \(id)` lets it go on")
        try expect(session, ["pause", id], 0, saying: "#\(id) f2: already paused")
        try expect(session, ["pause", String(ids[0])], 1, saying: "is already completed, so there is nothing to pause")
        try expect(session, ["pause", String(ids[1])], 1, saying: "has failed, so it is not moving; `instant-upload retry \(ids[1])` queues it again")
        try expect(session, ["pause", "99"], 1, saying: "there is no transfer #99")
        try expect(session, ["pause"], 2)
        try expect(session, ["pause", "--all", id], 2)
        try expect(session, ["pause", "x"], 2)
        try expect(session, ["resume", id], 0, saying: "resumed #\(id)")
        try expect(session, ["resume", id], 0, saying: "is not paused: it is on its way")
        try expect(session, ["resume", String(ids[0])], 1, saying: "is already completed, so there is nothing to resume")
        try expect(session, ["resume", "99"], 1, saying: "there is no transfer #99")
        try expect(session, ["resume"], 2)
        try expect(session, ["pause", "--all"], 0, saying: "paused the queue")
        try expect(session, ["resume", id], 0, saying: "the whole queue is paused: `instant-upload resume --all` lets it go on")
        try expect(session, ["resume", "--all"], 0, saying: "the queue goes on")
        try expect(session, ["resume", "--all"], 0, saying: "nothing is paused")
        // 3, a queue database that cannot be read: with every command, in BadInputTests.
    }

    @Test("clear: 0 whatever there was to clear, 2 an unknown group")
    func clear() throws {
        let (session, _) = try session()
        try expect(session, ["clear", "completed"], 0, saying: "nothing completed to clear")
        try expect(session, ["clear", "everything"], 2)
    }

    @Test("account add: 0 saved, 1 a wrong password or address, 2 not an address or no user where one is needed, 3 no server there or in maintenance")
    func accountAdd() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        let add = ["account", "add", "--webdav", server.webdavURL(), "--tus", server.tusURL, "--user", "alice", "--password-stdin"]
        try expect(session, add, 1, stdin: "wrong\n", saying: "did not accept the password for alice")
        try expect(session, add, 0, stdin: "wonderland\n", saying: "added account")
        try expect(session, ["account", "add", "ftp://example.org", "--user", "alice", "--password-stdin"], 2, stdin: "x\n",
                   saying: "not an http(s) address")
        // No --user: only a Nextcloud offers the browser login instead.
        try expect(session, ["account", "add", server.webdavURL()], 2, saying: "give your user name with --user NAME")
        try expect(session, ["account", "add", "--webdav", server.webdavURL(), "--tus", server.tusURL, "--password-stdin"], 2,
                   stdin: "x\n", saying: "missing --user NAME")
        try expect(session, ["account", "add", "http://127.0.0.1:9", "--user", "alice", "--password-stdin"], 3, stdin: "x\n",
                   saying: "cannot reach the server")
        try expect(session, ["account", "add", "http://127.0.0.1:9"], 3, saying: "cannot reach the server")
        // Something answers, but neither Nextcloud, ownCloud nor a WebDAV folder: a wrong address.
        try expect(session, ["account", "add", server.baseURL, "--user", "alice", "--password-stdin"], 1, stdin: "wonderland\n",
                   saying: "no WebDAV folder at the address")
        let nextcloud = try ReferenceServer(face: .nextcloud)
        try nextcloud.setMaintenance(true)
        try expect(session, ["account", "add", nextcloud.baseURL, "--user", "alice", "--password-stdin"], 3, stdin: "wonderland\n",
                   saying: "maintenance mode")
    }

    @Test("account list and remove: 0 listed or removed, 1 no such account, 2 no name")
    func accounts() throws {
        let (session, _) = try session()
        try expect(session, ["account", "list"], 0, saying: "home")
        try expect(session, ["account", "remove", "elsewhere"], 1, saying: "no account named elsewhere")
        try expect(session, ["account", "remove", "home"], 0, saying: "removed account home")
        try expect(session, ["account", "remove"], 2)
    }

    @Test("watch: 0 done, 1 no account yet, watched already, a name taken, no agent or no such rule, 2 a wrong command line, 3 a broken config")
    func watch() throws {
        let (session, store) = try session(accounts: [])
        let camera = session.home.path + "/Camera", scans = session.home.path + "/Scans"
        for folder in [camera, scans] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let file = try session.home.file("in/a.jpg", bytes: [1])
        try expect(session, ["watch", "add", camera, "--to", "/Photos", "--name", "cam"], 1, saying: "no account")
        try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:9/dav/", tusURL: "http://127.0.0.1:9/files/", username: "alice")
        try expect(session, ["watch", "add", camera, "--to", "/Photos", "--name", "cam"], 0)
        try expect(session, ["watch", "add", camera, "--to", "/Elsewhere"], 1, saying: "is already watched by the rule cam")
        try expect(session, ["watch", "add", scans, "--to", "/Scans", "--name", "cam"], 1, saying: "there is a rule named cam already")
        for (wrong, words) in [(["--frobnicate"], "--frobnicate"), (["--subfolders", "weekly"], "--subfolders"), (["--settle", "soon"], "--settle"),
                               (["--account", "nobody"], "no account named nobody"), (["--name", "a b/c"], "is not a rule name")] {
            try expect(session, ["watch", "add", scans, "--to", "/Scans"] + wrong, 2, saying: words)
        }
        try expect(session, ["watch", "add", scans], 2, saying: "--to")
        try expect(session, ["watch", "add", file, "--to", "/Scans"], 2, saying: "is not a folder")
        try expect(session, ["watch", "add", scans, "--to", "/../Scans"], 2, saying: "has `..` in it")

        try expect(session, ["watch", "list"], 1)
        try expect(session, ["watch", "list", "--frobnicate"], 2)
        try session.startAgent()
        let deadline = Date().addingTimeInterval(20)
        while try session.cli(["watch", "list"]).status != 0, Date() < deadline { usleep(200_000) }
        try expect(session, ["watch", "list"], 0, saying: "cam")
        session.stopAgent()

        try expect(session, ["watch", "pause", "cam"], 0)
        try expect(session, ["watch", "resume", "cam"], 0)
        for verb in ["remove", "pause", "resume"] {
            try expect(session, ["watch", verb, "nosuch"], 1, saying: "there is no watch rule named nosuch")
            try expect(session, ["watch", verb], 2)
        }
        try expect(session, ["watch", "remove", "cam"], 0)

        try session.writeConfig("[transfers]\nuploads = many\n")
        try expect(session, ["watch", "add", scans, "--to", "/Scans"], 3, saying: "config.ini")
        try expect(session, ["watch", "list"], 3, saying: "config.ini")
        try expect(session, ["watch", "remove", "cam"], 3, saying: "config.ini")
    }

    @Test("run: 0 once idle with --until-idle, 3 with another agent running")
    func run() throws {
        let (session, _) = try session()
        try expect(session, ["run", "--until-idle"], 0)
        try session.startAgent()
        try expect(session, ["run"], 3, saying: "already running")
    }

    @Test("service: 0 for status, which always answers; 2 for an unknown subcommand")
    func service() throws {
        let (session, _) = try session()
        try expect(session, ["service", "status"], 0, saying: "installed:")
        try expect(session, ["service", "restart"], 2)
    }

    @Test("help and version: 0 printed, 2 an unknown command")
    func helpAndVersion() throws {
        let (session, _) = try session()
        try expect(session, ["--version"], 0, saying: "instant-upload ")
        try expect(session, ["version"], 0, saying: "instant-upload ")
        try expect(session, ["help", "retry"], 0, saying: "usage: instant-upload retry ID...")
        try expect(session, ["help"], 0, saying: "usage: instant-upload COMMAND")
        try expect(session, ["help", "retyr"], 2, saying: "did you mean `retry`?")
        try expect(session, ["frobnicate"], 2)
    }
}
