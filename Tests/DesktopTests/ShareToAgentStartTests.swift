import Foundation
import Glibc
import Testing
import TestSupport

/// After queuing, share-to wakes the agent or starts it: the systemd user service where one
/// is installed, else `instant-upload run` detached. Either way it does not wait for it.
@Suite("share-to starts the agent")
struct ShareToAgentStartTests {
    /// The pid the agent answers with on its socket (`service status`), or nil.
    static func agentPID(_ session: AgentHarness) throws -> Int32? {
        let status = try session.cli(["service", "status"]).stdout
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("running:   yes, pid ") }) else { return nil }
        return Int32(line.dropFirst("running:   yes, pid ".count))
    }

    @Test("where a user manager knows the unit, share-to starts the service without waiting, and the file arrives")
    func startsUserService() throws {
        let server = try ReferenceServer()
        try server.makeFolder("X")
        let session = try AgentHarness()
        try session.addAccount(server)
        try session.writeConfig("[agent]\nautostart = true\n")
        // A running user manager leaves its socket in the runtime folder; this systemctl stands in
        // for it and starts the agent the way the unit's ExecStart would.
        let fake = TemporaryFolder("iu-systemctl")
        let calls = fake.path + "/calls"
        try fake.file("systemctl", bytes: Array("""
            #!/bin/sh
            echo "$*" >> "\(calls)"
            case "$*" in
              *" start --no-block instant-upload.service")
                # As systemd would: the agent shares no descriptor with systemctl's caller
                # (Foundation's Process waits until every holder of one of them has exited).
                /usr/bin/python3 -c 'import os,sys; os.closerange(3, 65536); os.execv(sys.argv[1], sys.argv[1:])' \\
                  "\(Repository.binaries)/instant-upload" run </dev/null >/dev/null 2>>"\(fake.path)/agent.log" &
                echo $! > "\(fake.path)/agent.pid" ;;
            esac
            exit 0

            """.utf8))
        chmod(fake.path + "/systemctl", 0o755)
        try FileManager.default.createDirectory(atPath: session.home.path + "/run/systemd", withIntermediateDirectories: true)
        try Shell.run("/usr/bin/python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])",
                                           session.home.path + "/run/systemd/private"])
        session.environment["PATH"] = fake.path + ":/usr/bin:/bin"
        defer {
            if let pid = try? String(contentsOfFile: fake.path + "/agent.pid", encoding: .utf8),
               let n = Int32(pid.trimmingCharacters(in: .whitespacesAndNewlines)) { kill(n, SIGKILL) }
        }

        let file = try session.home.file("desk/a.txt", bytes: Array("via the service".utf8))
        let r = try session.shareTo(["--to", "/X", file])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("started the agent's user service (instant-upload.service)"), "\(r.stdout)")
        let recorded = (try? String(contentsOfFile: calls, encoding: .utf8)) ?? ""
        #expect(recorded == "--user --no-pager start --no-block instant-upload.service\n")
        try session.waitForAll("completed", count: 1)
        #expect(try String(contentsOfFile: server.tree() + "/X/a.txt", encoding: .utf8) == "via the service")
    }

    @Test("without a user manager, share-to starts the agent detached and does not wait for it; the file arrives")
    func startsDetached() throws {
        let server = try ReferenceServer()
        try server.makeFolder("X")
        let session = try AgentHarness()
        try session.addAccount(server)
        try session.writeConfig("[agent]\nautostart = true\n")
        let file = try session.home.file("desk/a.txt", bytes: Array("detached".utf8))
        let r = try session.shareTo(["--to", "/X", file])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("started the agent in the background"), "\(r.stdout)")
        try session.waitForAll("completed", count: 1)
        #expect(try String(contentsOfFile: server.tree() + "/X/a.txt", encoding: .utf8) == "detached")
        if let pid = try Self.agentPID(session) { kill(pid, SIGKILL) }
    }

    @Test("with an agent running, share-to only rings its doorbell")
    func wakesRunningAgent() throws {
        let server = try ReferenceServer()
        try server.makeFolder("X")
        let session = try AgentHarness()
        try session.addAccount(server)
        try session.writeConfig("[agent]\nautostart = true\n")
        try session.startAgent()
        let file = try session.home.file("desk/a.txt", bytes: Array("woken".utf8))
        let r = try session.shareTo(["--to", "/X", file])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.contains("started"), "\(r.stdout)")
        try session.waitForAll("completed", count: 1, timeout: 20)
    }
}
