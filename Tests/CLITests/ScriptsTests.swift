import Foundation
import Glibc
import TestSupport
import Testing

/// The helpers behind `make run` and `make test`.
@Suite("make run and make test helpers")
struct ScriptsTests {
    @Test("make run with an agent already running says so and follows its log, starting no second agent or server")
    func runWithAgentRunning() throws {
        let session = try AgentHarness()
        try session.startAgent()
        let pid = try #require(session.agentPID)
        let r = try Shell.capture("/usr/bin/timeout", ["-s", "KILL", "5", "bash", Repository.root + "/scripts/run-local.sh", Repository.binaries],
                                  environment: session.environment)
        // Killed by the timeout (timeout kills its own group with KILL, itself included: -1 for
        // a signal), never ending by itself.
        #expect([124, 137, -1].contains(r.status), "it keeps following until stopped: \(r.status) \(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("an agent is already running (pid \(pid)), so no second one is started; `instant-upload stop` stops it."), "\(r.stdout)")
        #expect(r.stdout.contains("Following its log (\(session.home.path)/agent.log)"), "\(r.stdout)")
        #expect(!r.stdout.contains("reference server"), "\(r.stdout)")
        #expect(!r.stderr.contains("already running"), "no second agent met the lock: \(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: session.home.path + "/state/instant-upload/reference-server.out"))
        #expect(session.agentIsRunning)
    }

    @Test("make run with the demo account and an agent running, after the demo server stopped: it starts the server again and follows the agent's log")
    func demoServerForRunningAgent() throws {
        let session = try AgentHarness()
        let first = try ReferenceServer(users: [("demo", "demo")])
        let port = first.port
        try session.addAccount(address: first.webdavURL("demo"), user: "demo", password: "demo", name: "demo")
        first.stop()
        try session.startAgent()
        let r = try Shell.capture("/usr/bin/timeout", ["-s", "KILL", "10", "bash", Repository.root + "/scripts/run-local.sh", Repository.binaries],
                                  environment: session.environment.merging(["DEMO_PORT": "\(port)"]) { _, new in new })
        #expect([124, 137, -1].contains(r.status), "it keeps following until stopped: \(r.status) \(r.stdout) \(r.stderr)")
        let state = session.home.path + "/state/instant-upload"
        #expect(r.stdout.contains("starting the bundled reference server on 127.0.0.1:\(port)"), "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains("what arrives is in \(state)/reference-server/tree/demo/"), "\(r.stdout)")
        #expect(r.stdout.contains("Ctrl-C stops following and the demo server, the agent keeps running"), "\(r.stdout)")
        let out = (try? String(contentsOfFile: state + "/reference-server.out", encoding: .utf8)) ?? ""
        #expect(out.contains("READY"), "the demo server started: \(out)")
        #expect(!r.stderr.contains("already running"), "no second agent met the lock: \(r.stderr)")
        #expect(session.agentIsRunning)
    }

    @Test("the warnings guard fails on a compiler warning from Sources/, not on one from Tests/, and keeps failing until it is fixed")
    func warningsGuard() throws {
        // A copy of the script in a tree of its own, so touching files never touches this one.
        let folder = TemporaryFolder("iu-warnings")
        let root = folder.path
        let guardScript = try folder.file("scripts/check-warnings.sh",
                                          bytes: Array(try Data(contentsOf: URL(fileURLWithPath: Repository.root + "/scripts/check-warnings.sh"))))
        chmod(guardScript, 0o755)
        let source = try folder.file("Sources/CLI/Version.swift", bytes: Array("let x = 1\n".utf8))
        let old = timespec(tv_sec: 1_000_000, tv_nsec: 0)
        var times = [old, old]
        utimensat(AT_FDCWD, source, &times, 0)
        let testsOnly = try folder.file("tests.log", bytes: Array("""
            [12/40] Compiling EngineTests DownloadTests.swift
            \(root)/Tests/EngineTests/DownloadTests.swift:73:29: warning: result of call to 'createFile' is unused [#no-usage]
            Build complete!

            """.utf8))
        #expect(try Shell.capture(guardScript, [testsOnly, folder.path + "/missing.log"]).status == 0)

        let withSource = try folder.file("sources.log", bytes: Array("""
            \(root)/Sources/CLI/Version.swift:3:9: warning: variable 'x' was never used
            """.utf8))
        let r = try Shell.capture(guardScript, [testsOnly, withSource])
        #expect(r.status == 1)
        #expect(r.stderr.contains("Sources/CLI/Version.swift:3:9: warning: variable 'x' was never used"), "\(r.stderr)")
        var after = stat()
        stat(source, &after)
        #expect(after.st_mtim.tv_sec > old.tv_sec, "the file that warned is touched, so the next build compiles it and warns again")
    }
}
