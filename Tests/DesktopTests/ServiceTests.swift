import Desktop
import Foundation
import Glibc
import Platform
import Testing
import TestSupport

/// `instant-upload service ...` run as a program, in a private XDG session.
@Suite("systemd user service")
struct ServiceTests {
    /// A home with its own XDG folders; `PATH` finds only the system's programs unless a
    /// test puts a `systemctl` of its own first.
    final class Session: @unchecked Sendable {
        // Sendable by construction: every property is set once in init.
        let home = TemporaryFolder("iu-service")
        var environment: [String: String]

        init(path: String = "/usr/bin:/bin") throws {
            environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/config", "XDG_STATE_HOME": home.path + "/state",
                           "XDG_RUNTIME_DIR": home.path + "/run", "PATH": path]
            try FileManager.default.createDirectory(atPath: home.path + "/run", withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }

        var unitPath: String { home.path + "/config/systemd/user/instant-upload.service" }
        var unit: String { (try? String(contentsOfFile: unitPath, encoding: .utf8)) ?? "" }

        @discardableResult
        func service(_ subcommand: String) throws -> Shell.Result {
            try Shell.capture(Repository.binaries + "/instant-upload", ["service", subcommand], environment: environment)
        }
    }

    /// The agent binary as /proc/self/exe names it: symlinks resolved.
    static var agentExecutable: String {
        URL(fileURLWithPath: Repository.binaries + "/instant-upload").resolvingSymlinksInPath().path
    }

    @Test("install without a systemd user manager writes nothing, says so clearly, and exits 3")
    func installWithoutSystemd() throws {
        let session = try Session()
        let result = try session.service("install")
        #expect(result.status == 3)
        #expect(!result.stdout.contains("wrote"), "\(result.stdout)")
        #expect(result.stderr.contains("systemd user services are not available here"))
        #expect(result.stderr.contains("nothing was written"))
        #expect(result.stderr.contains("`share-to` and `upload` start the agent themselves"))
        #expect(!FileManager.default.fileExists(atPath: session.unitPath))
        #expect(!FileManager.default.fileExists(atPath: session.home.path + "/config/systemd"), "not even its folder")
    }

    @Test("status tells installed, enabled and running apart; uninstall removes a unit left by a session with a user manager")
    func statusAndUninstallWithoutSystemd() throws {
        let session = try Session()
        var status = try session.service("status")
        #expect(status.status == 0)
        #expect(status.stdout.contains("installed: no"))

        // A unit left by a session that had a user manager.
        try #require(try UserService(paths: XDGPaths(environment: session.environment)).writeUnit(executable: Self.agentExecutable) == .created)
        status = try session.service("status")
        #expect(status.status == 0)
        #expect(status.stdout.contains("installed: yes, \(session.unitPath) (starts \(Self.agentExecutable) run)"))
        #expect(status.stdout.contains("enabled:   no"))
        #expect(status.stdout.contains("running:   no agent answers"))
        #expect(status.stdout.contains("systemd:   user services are not available here"))

        let removed = try session.service("uninstall")
        #expect(removed.status == 0)
        #expect(removed.stdout.contains("removed \(session.unitPath)"))
        #expect(!FileManager.default.fileExists(atPath: session.unitPath))
        #expect(try session.service("uninstall").stdout.contains("the service is not installed"))
    }

    /// Where a user manager runs, install drives `systemctl --user`. This container has none,
    /// so a recording `systemctl` stands in for it; the test checks the calls, in order.
    @Test("with a user manager: daemon-reload, enable, start; reinstalling leaves a running service alone")
    func installWithSystemd() throws {
        let fake = TemporaryFolder("iu-systemctl")
        let log = fake.path + "/calls"
        try fake.file("systemctl", bytes: Array("""
            #!/bin/sh
            echo "$*" >> "\(log)"
            case "$*" in
              *" enable "*) mkdir -p "$XDG_CONFIG_HOME/systemd/user/default.target.wants" &&
                            ln -sf ../instant-upload.service "$XDG_CONFIG_HOME/systemd/user/default.target.wants/" ;;
              *" disable "*) rm -f "$XDG_CONFIG_HOME/systemd/user/default.target.wants/instant-upload.service"; rm -f "\(fake.path)/active" ;;
              *" start "*) touch "\(fake.path)/active" ;;
              *" is-active --quiet "*) test -e "\(fake.path)/active"; exit $? ;;
              *" is-active "*) if test -e "\(fake.path)/active"; then echo active; else echo inactive; exit 3; fi ;;
            esac
            exit 0

            """.utf8))
        chmod(fake.path + "/systemctl", 0o755)
        let session = try Session(path: fake.path + ":/usr/bin:/bin")
        // What a running user manager leaves in the runtime folder.
        try FileManager.default.createDirectory(atPath: session.home.path + "/run/systemd", withIntermediateDirectories: true)
        try Shell.run("/usr/bin/python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])",
                                           session.home.path + "/run/systemd/private"])
        func calls() -> [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map {
                String($0.dropFirst("--user --no-pager ".count))
            }
        }

        let installed = try session.service("install")
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stdout.contains("the service is running and starts again at login"))
        #expect(calls() == ["daemon-reload", "enable instant-upload.service", "is-active --quiet instant-upload.service",
                            "start instant-upload.service"])
        let unit = session.unit
        #expect(unit.contains("\nExecStart=\(Self.agentExecutable) run\n"))
        #expect(unit.contains("\nRestart=on-failure\n"))
        #expect(unit.contains("\nRestartSec=5\n"))
        #expect(unit.contains("\nStandardError=journal\n"))
        #expect(unit.contains("[Install]\nWantedBy=default.target\n"))
        #expect(Self.agentExecutable.hasPrefix("/"))

        try FileManager.default.removeItem(atPath: log)
        let again = try session.service("install")
        #expect(again.status == 0)
        #expect(again.stdout.contains("is up to date"))
        #expect(calls() == ["daemon-reload", "enable instant-upload.service", "is-active --quiet instant-upload.service"])

        let status = try session.service("status")
        #expect(status.stdout.contains("enabled:   yes, starts at login"))
        #expect(status.stdout.contains("systemd:   the service is active"))

        try FileManager.default.removeItem(atPath: log)
        let removed = try session.service("uninstall")
        #expect(removed.status == 0)
        #expect(removed.stdout.contains("and stopped the service"))
        #expect(calls() == ["disable --now instant-upload.service", "daemon-reload"])
        #expect(!FileManager.default.fileExists(atPath: session.unitPath))
    }

    @Test("a failing systemctl is reported with its words, exit 3")
    func systemctlFails() throws {
        let fake = TemporaryFolder("iu-systemctl")
        try fake.file("systemctl", bytes: Array("#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n".utf8))
        chmod(fake.path + "/systemctl", 0o755)
        let session = try Session(path: fake.path + ":/usr/bin:/bin")
        try FileManager.default.createDirectory(atPath: session.home.path + "/run/systemd", withIntermediateDirectories: true)
        try Shell.run("/usr/bin/python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])",
                                           session.home.path + "/run/systemd/private"])
        let result = try session.service("install")
        #expect(result.status == 3)
        #expect(result.stderr.contains("`systemctl --user daemon-reload` failed (1): Failed to connect to bus: No medium found"))
    }

    @Test("ExecStart survives spaces, percent signs and dollars in the install path")
    func execStartQuoting() {
        let odd = "/home/ann/My Apps/100%/$HOME/instant-upload"
        #expect(UserService.execStartPath(odd) == "\"/home/ann/My Apps/100%%/$HOME/instant-upload\"")
        #expect(UserService.execStartPath("/usr/local/bin/instant-upload") == "/usr/local/bin/instant-upload")
    }

    @Test("systemd's own parser accepts the unit, quoted path included, and finds the program")
    func systemdVerifies() throws {
        let home = TemporaryFolder("iu-service")
        let odd = home.path + "/My Apps/100% $ure/instant-upload"
        try FileManager.default.createDirectory(atPath: (odd as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/bin/true", toPath: odd)
        let service = UserService(paths: XDGPaths(environment: ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/config"]))
        _ = try service.writeUnit(executable: odd)
        let verified = try Shell.capture("/usr/bin/systemd-analyze", ["verify", service.unitPath])
        #expect(verified.status == 0, "\(verified.stderr)")

        // The same parser fails when the program is not where ExecStart says.
        try FileManager.default.removeItem(atPath: odd)
        let broken = try Shell.capture("/usr/bin/systemd-analyze", ["verify", service.unitPath])
        #expect(broken.status != 0)
        #expect(broken.stderr.contains("\(odd) is not executable"))
    }

    @Test("packaging/systemd/instant-upload.service runs the agent as the unit `service install` writes does")
    func packagedUnitMatches() throws {
        // Apart from comments and the man page link, the same unit with the installed folder filled in.
        func body(_ unit: String) -> [Substring] {
            unit.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("Documentation=") }
        }
        let packaged = try String(contentsOfFile: Repository.root + "/packaging/systemd/instant-upload.service", encoding: .utf8)
        #expect(body(packaged) == body(UserService.unitText(executable: "@BINDIR@/instant-upload")))
    }

    @Test("paths systemd cannot start are refused, not written as a broken unit")
    func unstartablePaths() {
        #expect(UserService.problem(withExecutable: "/opt/my apps/50% $x/instant-upload") == nil)
        #expect(UserService.problem(withExecutable: "/opt/\"quoted\"/instant-upload")?.contains("quotes, backslashes") == true)
        #expect(UserService.problem(withExecutable: "/opt/back\\slash/instant-upload") != nil)
        #expect(UserService.problem(withExecutable: "/opt/new\nline/instant-upload") != nil)
        #expect(UserService.problem(withExecutable: "relative/instant-upload") != nil)
    }

    @Test("the installed executable reads back from the unit, odd characters and all")
    func installedExecutableRoundTrip() throws {
        let home = TemporaryFolder("iu-service")
        let service = UserService(paths: XDGPaths(environment: ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/config"]))
        let odd = "/opt/my apps/50% $x/instant-upload"
        #expect(try service.writeUnit(executable: odd) == .created)
        #expect(service.installedExecutable == odd)
        #expect(try service.writeUnit(executable: odd) == .unchanged)
        #expect(try service.writeUnit(executable: "/usr/bin/instant-upload") == .updated)
        #expect(service.unitPath == home.path + "/config/systemd/user/instant-upload.service")
    }
}
