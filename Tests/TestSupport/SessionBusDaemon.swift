import Foundation
import Platform
import Glibc

/// A session bus of the test's own: a real `dbus-daemon` listening in a temporary folder,
/// with no service files, so nothing on the bus but what the test starts.
public final class SessionBusDaemon: @unchecked Sendable {
    // Sendable by construction: `folder`, `address` and `daemon` are set once in init; the
    // daemon is only killed from `stop()`/deinit, and Process is thread-safe for that.
    public let folder = TemporaryFolder("iu-dbus")
    public let address: String
    private let daemon: ChildProcess

    public init() throws {
        let socket = folder.path + "/bus"
        address = "unix:path=" + socket
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try folder.file("session.conf", bytes: Array(config.utf8))
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else {
            throw TestFailure("/usr/bin/dbus-daemon is missing: `make test` installs the dbus package")
        }
        // Never the test runner's own pipes: `swift test` waits for every holder of them.
        // The socket's file appears when it is bound, a moment before it listens (a client
        // then is refused); the daemon prints its address once it listens.
        let printed = folder.path + "/address"
        daemon = try ChildProcess("/usr/bin/dbus-daemon", ["--config-file=" + folder.path + "/session.conf", "--nofork", "--nopidfile",
                                                           "--print-address=1"],
                                  output: .file(printed), error: .file(folder.path + "/dbus-daemon.log"))
        try Poll.until("dbus-daemon listens on \(socket)") {
            (try? String(contentsOfFile: printed, encoding: .utf8))?.contains("\n") == true
        }
    }

    deinit { stop() }

    /// What a process on this bus sees: only the bus address, nothing from the test's session.
    public var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }

    /// The bus goes away, as when the desktop session ends.
    public func stop() {
        if daemon.isRunning { Poll.kill9(daemon) }
    }
}

/// Waiting and stopping, for helpers that run processes.
public enum Poll {
    /// Polls `condition` every 20 ms for up to `seconds`: a deadline for what must happen,
    /// generous because a loaded two-core machine can take seconds to start a process.
    public static func until(_ what: String, seconds: Double = 30, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if try condition() { return }
            if Date() >= deadline { break }
            usleep(20_000)
        }
        throw TestFailure("timed out after \(seconds) s waiting until \(what)")
    }

    /// SIGKILL: a stand-in is gone at once, as when the session ends.
    public static func kill9(_ process: ChildProcess) {
        process.send(SIGKILL)
        process.waitUntilExit()
    }
}
