import Foundation
import Glibc
import Platform
import TestSupport
import Testing

/// Local security through the real binaries: folders only this user may change, the /tmp
/// fallback made safely and per queue, no link followed to the lock or the socket, no
/// password in clear text across a network unless asked, names escaped in the log, and no
/// blank folder on the server.
@Suite("Local security")
struct LocalSecurityTests {
    static let other: uid_t = 65534 // nobody

    /// Runs `arguments` as the user nobody (the machine's other user).
    static func asNobody(_ arguments: [String]) throws -> Shell.Result {
        try Shell.capture("/usr/bin/setpriv", ["--reuid=\(other)", "--regid=\(other)", "--clear-groups"] + arguments)
    }

    static func giveAway(_ path: String) throws {
        try #require(chown(path, other, other) == 0, "giving \(path) to another user needs root: \(String(cString: strerror(errno)))")
    }

    static func mode(_ path: String) -> (mode: mode_t, uid: uid_t, isLink: Bool, isFolder: Bool)? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return (st.st_mode & 0o7777, st.st_uid, st.st_mode & S_IFMT == S_IFLNK, st.st_mode & S_IFMT == S_IFDIR)
    }

    /// A session whose environment has no XDG_RUNTIME_DIR, and the /tmp folder it falls back to.
    static func sessionWithoutRuntimeDir() throws -> (AgentHarness, String) {
        let session = try AgentHarness()
        session.environment.removeValue(forKey: "XDG_RUNTIME_DIR")
        return (session, XDGPaths(environment: session.environment).runtimeDirectory)
    }

    static func agentRunning(_ session: AgentHarness) throws -> Bool {
        let r = try session.cli(["status", "--json"])
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return json?["agent_running"] as? Bool ?? false
    }

    // MARK: Folders

    @Test("a state, config or runtime folder that another user owns or that others can write is refused, naming it")
    func foldersMustBePrivate() throws {
        let session = try AgentHarness()
        let state = session.home.path + "/state/instant-upload"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)

        try Self.giveAway(state)
        let owned = try session.cli(["queue"])
        #expect(owned.status == 3, "\(owned.stdout) \(owned.stderr)")
        #expect(owned.stderr.contains("state folder \(state) belongs to user nobody"), "\(owned.stderr)")
        #expect(!FileManager.default.fileExists(atPath: state + "/queue.sqlite3"), "nothing was written into it")

        #expect(chown(state, geteuid(), getegid()) == 0)
        #expect(chmod(state, 0o777) == 0)
        let writable = try session.cli(["queue"])
        #expect(writable.status == 3)
        #expect(writable.stderr.contains(state) && writable.stderr.contains("chmod 700"), "\(writable.stderr)")

        // Only readable by others: the program's own folder is tightened, not refused.
        #expect(chmod(state, 0o755) == 0)
        #expect(try session.cli(["queue"]).status == 0)
        #expect(Self.mode(state)?.mode == 0o700)

        let config = session.home.path + "/config/instant-upload"
        #expect(chmod(config, 0o777) == 0)
        let file = try session.home.file("in/a.jpg", bytes: [1])
        let upload = try session.cli(["upload", "--to", "/X", file])
        #expect(upload.status == 3, "\(upload.stderr)")
        #expect(upload.stderr.contains("config folder \(config) can be changed by other users"), "\(upload.stderr)")
        #expect(chmod(config, 0o700) == 0)

        let runtime = session.home.path + "/run/instant-upload"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        try Self.giveAway(runtime)
        let run = try session.cli(["run", "--until-idle"])
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stderr.contains("runtime folder \(runtime) belongs to user nobody"), "\(run.stderr)")
    }

    @Test("without XDG_RUNTIME_DIR the /tmp folder is made 0700, and refused when another user made it or it is a link")
    func temporaryRuntimeFolder() throws {
        let (session, runtime) = try Self.sessionWithoutRuntimeDir()
        #expect(runtime.hasPrefix("/tmp/instant-upload-\(geteuid())-"))
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        try? FileManager.default.removeItem(atPath: runtime)

        // Someone else got there first, with a folder anyone may write.
        let squat = try Self.asNobody(["/bin/mkdir", "-m", "0777", runtime])
        try #require(squat.status == 0, "\(squat.stderr)")
        let taken = try session.cli(["run", "--until-idle"])
        #expect(taken.status == 3, "\(taken.stderr)")
        #expect(taken.stderr.contains("runtime folder \(runtime) belongs to user nobody"), "\(taken.stderr)")
        #expect(taken.stderr.contains("XDG_RUNTIME_DIR"), "says what to do: \(taken.stderr)")
        #expect(Self.mode(runtime)?.uid == Self.other, "the other user's folder was left alone")
        try FileManager.default.removeItem(atPath: runtime)

        // A link to a folder that is even ours: someone could point it anywhere.
        let elsewhere = session.home.path + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(symlink(elsewhere, runtime) == 0)
        let linked = try session.cli(["run", "--until-idle"])
        #expect(linked.status == 3, "\(linked.stderr)")
        #expect(linked.stderr.contains("runtime folder \(runtime) is a symbolic link"), "\(linked.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        #expect(unlink(runtime) == 0)

        let made = try session.cli(["run", "--until-idle"])
        #expect(made.status == 0, "\(made.stderr)")
        let folder = try #require(Self.mode(runtime))
        #expect(folder.isFolder && !folder.isLink && folder.mode == 0o700 && folder.uid == geteuid(), "\(folder)")
    }

    @Test("two HOMEs of one user without XDG_RUNTIME_DIR have their own agents; cancel in one never waits on the other's")
    func twoHomesTwoAgents() throws {
        let server = try ReferenceServer()
        let (first, firstRuntime) = try Self.sessionWithoutRuntimeDir()
        let (second, secondRuntime) = try Self.sessionWithoutRuntimeDir()
        defer { for folder in [firstRuntime, secondRuntime] { try? FileManager.default.removeItem(atPath: folder) } }
        #expect(firstRuntime != secondRuntime)
        try first.addAccount(server)
        try second.addAccount(server)

        try first.startAgent(socket: firstRuntime + "/agent.sock")
        #expect(try Self.agentRunning(first))
        #expect(try !Self.agentRunning(second), "the first HOME's agent does not answer for the second's queue")

        // No agent of its own: the second HOME's cancel takes the row out at once.
        let file = try second.home.file("in/a.jpg", bytes: [1, 2, 3])
        #expect(try second.cli(["upload", "--to", "/", file]).status == 0)
        let id = try #require(try second.items().first?["id"] as? Int)
        let started = Date()
        let cancel = try second.cli(["cancel", String(id)])
        #expect(cancel.stdout.contains("cancelled #\(id)"), "\(cancel.stdout) \(cancel.stderr)")
        #expect(Date().timeIntervalSince(started) < 4, "cancel did not wait on an agent that is not this queue's")
        #expect(try second.items().isEmpty)

        try second.startAgent(socket: secondRuntime + "/agent.sock")
        #expect(try Self.agentRunning(second))
        #expect(first.agentIsRunning && second.agentIsRunning, "both agents run: \(second.agentLog)")
    }

    @Test("the lock file and the socket are never reached through a link")
    func noLinksToLockOrSocket() throws {
        let session = try AgentHarness()
        let runtime = session.home.path + "/run/instant-upload"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let victim = try session.home.file("victim.txt", bytes: Array("precious".utf8))

        #expect(symlink(victim, runtime + "/agent.lock") == 0)
        let lock = try session.cli(["run", "--until-idle"])
        #expect(lock.status == 3, "\(lock.stderr)")
        #expect(lock.stderr.contains(runtime + "/agent.lock"), "\(lock.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious", "the file behind the link was not truncated")
        #expect(unlink(runtime + "/agent.lock") == 0)

        #expect(symlink(victim, runtime + "/agent.sock") == 0)
        let socket = try session.cli(["run", "--until-idle"])
        #expect(socket.status == 3, "\(socket.stderr)")
        #expect(socket.stderr.contains(runtime + "/agent.sock"), "\(socket.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(unlink(runtime + "/agent.sock") == 0)

        // The CLI does not ring through a link either, even to a real agent's socket.
        let other = try AgentHarness()
        try other.startAgent()
        #expect(symlink(other.home.path + "/run/instant-upload/agent.sock", runtime + "/agent.sock") == 0)
        #expect(try !Self.agentRunning(session))
        #expect(try Self.agentRunning(other))
    }

    @Test("the CLI never takes an answer from a socket another user listens on")
    func socketOfAnotherUser() throws {
        let (session, runtime) = try Self.sessionWithoutRuntimeDir()
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        try? FileManager.default.removeItem(atPath: runtime)
        // Another user squats the folder and answers "pong" to anything.
        try #require(try Self.asNobody(["/bin/mkdir", "-m", "0755", runtime]).status == 0)
        let script = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(4)
            print("listening", flush=True)
            while True:
                c, _ = s.accept(); c.recv(100); c.sendall(b"pong\\n"); c.close()
            """
        let impostor = try ChildProcess("/usr/bin/setpriv", ["--reuid=\(Self.other)", "--regid=\(Self.other)", "--clear-groups",
                                                             "/usr/bin/python3", "-c", script, runtime + "/agent.sock"], output: .pipe)
        defer { impostor.stop() }
        _ = impostor.standardOutput!.availableData // "listening"
        let probe = try Shell.capture("/usr/bin/python3", ["-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b'ping\\n'); print(s.recv(10))", runtime + "/agent.sock"])
        try #require(probe.stdout.contains("pong"), "the impostor answers: \(probe.stdout) \(probe.stderr)")
        #expect(try !Self.agentRunning(session), "an answer from another user's process is not this user's agent")
    }

    // MARK: Addresses

    @Test("http:// to another machine is refused unless --allow-insecure-http; nothing is saved")
    func insecureHTTP() throws {
        let network = try TestNetwork()
        let server = try ReferenceServer(namespace: network.server, host: network.serverAddress)
        #expect(server.baseURL.hasPrefix("http://\(network.serverAddress):"))
        let session = try AgentHarness()
        session.namespace = network.agent
        let add = ["account", "add", "--webdav", server.webdavURL(), "--tus", server.tusURL, "--user", "alice", "--name", "home",
                   "--password-stdin"]

        let refused = try session.cli(add, stdin: "wonderland\n")
        #expect(refused.status == 2, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("clear text") && refused.stderr.contains("--allow-insecure-http"), "\(refused.stderr)")
        #expect((try JSONSerialization.jsonObject(with: Data(session.cli(["account", "list", "--json"]).stdout.utf8)) as? [Any])?.isEmpty == true, "no account was saved")

        // A name that only starts like a loopback address is another machine.
        let lookalike = try session.cli(["account", "add", "http://127.0.0.1.example.invalid/", "--user", "alice", "--password-stdin"],
                                        stdin: "wonderland\n")
        #expect(lookalike.status == 2 && lookalike.stderr.contains("clear text"), "\(lookalike.stderr)")

        let allowed = try session.cli(add + ["--allow-insecure-http"], stdin: "wonderland\n")
        #expect(allowed.status == 0, "\(allowed.stderr)")
    }

    // MARK: Names

    @Test("a name with a newline and an escape sequence reaches the agent's log escaped, never as a forged line")
    func namesEscapedInLog() throws {
        let server = try ReferenceServer()
        try server.makeFolder("X")
        let session = try AgentHarness()
        try session.addAccount(server)
        let name = "evil\ninstant-upload[1] error: forged\u{1b}[2J.jpg"
        let file = try session.home.file("in/" + name, bytes: Array("forged".utf8))
        #expect(try session.cli(["upload", "--to", "/X", file]).status == 0)
        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        session.stopAgent()
        let log = session.agentLog
        #expect(log.contains("home:/X/evil\\ninstant-upload[1] error: forged\\x1b[2J.jpg"), "\(log)")
        #expect(!log.contains("\u{1b}"), "\(log)")
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix("instant-upload[1] error: forged") }, "\(log)")
    }

    @Test("an empty or blank folder on the server is refused by upload, share-to, retry and watch add")
    func blankFolders() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        let file = try session.home.file("in/a.jpg", bytes: [1])
        for folder in ["", "   ", "\t", "/Photos/  /2026"] {
            let upload = try session.cli(["upload", "--to", folder, file])
            #expect(upload.status == 2, "upload --to \(folder.debugDescription): \(upload.stderr)")
            #expect(upload.stderr.contains("empty") || upload.stderr.contains("only spaces"), "\(upload.stderr)")
            let share = try session.shareTo(["--to", folder, file])
            #expect(share.status == 2, "share-to --to \(folder.debugDescription): \(share.stderr)")
            let retry = try session.cli(["retry", "1", "--to", folder])
            #expect(retry.status == 2, "retry --to \(folder.debugDescription): \(retry.stderr)")
            let watch = try session.cli(["watch", "add", session.home.path + "/in", "--to", folder])
            #expect(watch.status == 2, "watch add --to \(folder.debugDescription): \(watch.stderr)")
            #expect(watch.stderr.contains("empty") || watch.stderr.contains("only spaces"), "\(watch.stderr)")
        }
        #expect(try session.items().isEmpty)
        #expect(!(try session.cli(["watch", "list"]).stdout.contains("/in")), "no rule was written")
    }

    // MARK: Secrets

    @Test("a credentials file with mode 0644 is refused by account add and download alike, with the command that fixes it")
    func credentialsFileOpenToOthers() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        let file = XDGPaths(environment: session.environment).credentialsFile
        try #require(chmod(file, 0o644) == 0)

        let add = try session.cli(["account", "add", "--webdav", server.webdavURL(), "--tus", server.tusURL, "--user", "alice",
                                   "--name", "work", "--password-stdin"], stdin: "wonderland\n")
        #expect(add.status == 3, "\(add.stderr)")
        #expect(add.stderr.contains("can be read by others (mode 644)") && add.stderr.contains("`chmod 600 \(file)`"), "\(add.stderr)")
        #expect(!(try session.cli(["account", "list"]).stdout.contains("work")), "the account was added without its password")
        let download = try session.cli(["download", "/anything.pdf"])
        #expect(download.status == 3 && download.stderr.contains("`chmod 600 \(file)`"), "\(download.stderr)")
    }

    /// A session whose keyring answers lookups but refuses to store (the stand-in has no
    /// CreateItem, so `secret-tool store` fails against it).
    static func refusingKeyring() throws -> (SessionBusDaemon, SecretServiceStandIn, AgentHarness) {
        let bus = try SessionBusDaemon()
        let keyring = try SecretServiceStandIn(bus: bus, items: [])
        return (bus, keyring, try AgentHarness(extraEnvironment: bus.environment))
    }

    @Test("a keyring that refuses to store the password, and no terminal to ask: nothing is saved, and the person is told what to do")
    func keyringRefusesWithoutATerminal() throws {
        let server = try ReferenceServer()
        let (bus, keyring, session) = try Self.refusingKeyring()
        defer { withExtendedLifetime((bus, keyring)) {} }
        // A session of its own: no controlling terminal to ask on, as under a script or a service.
        let r = try Shell.capture("/usr/bin/setsid", ["-w", Repository.binaries + "/instant-upload", "account", "add", "--webdav", server.webdavURL(),
                                                      "--tus", server.tusURL, "--user", "alice", "--name", "home", "--password-stdin"],
                                  environment: session.environment, stdin: "wonderland\n")
        #expect(r.status == 3, "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains("refused to store the password") && r.stderr.contains("nothing was saved")
                && r.stderr.contains("add it on a terminal"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: XDGPaths(environment: session.environment).credentialsFile))
        #expect(!(try session.cli(["account", "list"]).stdout.contains("home")))
    }

    @Test("a keyring that refuses to store the password, on a terminal: the person is asked, and a yes keeps it in the file, 0600")
    func keyringRefusesOnATerminal() throws {
        let server = try ReferenceServer()
        let (bus, keyring, session) = try Self.refusingKeyring()
        defer { withExtendedLifetime((bus, keyring)) {} }
        let terminal = try TerminalSession(rows: 12, columns: 160, command: [
            "/usr/bin/env", "DBUS_SESSION_BUS_ADDRESS=" + bus.address, Repository.binaries + "/instant-upload", "account", "add",
            "--webdav", server.webdavURL(), "--tus", server.tusURL, "--user", "alice", "--name", "home",
        ], environment: session.environment)
        try terminal.waitFor("the password prompt") { $0.contains { $0.contains("Password for alice at 127.0.0.1") } }
        try terminal.send("wonderland", "Enter")
        let asked = try terminal.waitFor("the question") { $0.contains { $0.contains("readable only by you? [y/N]") } }
        #expect(asked.contains { $0.contains("refused to store the password") }, "\(asked)")
        let file = XDGPaths(environment: session.environment).credentialsFile
        #expect(!FileManager.default.fileExists(atPath: file), "written before the answer")
        try terminal.send("y", "Enter")
        let done = try terminal.waitFor("account add to end") { $0.contains { $0.hasPrefix("exit=") } }
        #expect(done.contains("exit=0") && done.contains { $0.contains("password saved in the credentials file") }, "\(done)")
        var st = stat()
        #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(try session.cli(["account", "list"]).stdout.contains("home"))
    }
}
