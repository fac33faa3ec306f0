import Foundation
import Platform
import Glibc
import TestSupport

/// A session bus of the test's own (see `SessionBusDaemon`) with notification recorders on it.
final class PrivateSessionBus: @unchecked Sendable {
    // Sendable by construction: `daemon` is set once in init; `recorders` only grows from
    // the owning test's thread.
    let daemon: SessionBusDaemon
    private var recorders: [NotificationRecorder] = []

    init() throws { daemon = try SessionBusDaemon() }

    deinit { stop() }

    var folder: TemporaryFolder { daemon.folder }
    var address: String { daemon.address }
    /// What a process on this bus sees: only the bus address, nothing from the test's session.
    var environment: [String: String] { daemon.environment }

    /// Starts a recording notification server on this bus and waits until it owns the name.
    func startRecorder(capabilities: [String] = ["actions", "body"]) throws -> NotificationRecorder {
        let recorder = try NotificationRecorder(bus: self, capabilities: capabilities)
        recorders.append(recorder)
        return recorder
    }

    /// The bus goes away, as when the desktop session ends.
    func stop() {
        recorders.forEach { $0.stop() }
        daemon.stop()
    }
}

/// The Python notification server (notification-recorder.py) and what it recorded.
final class NotificationRecorder: @unchecked Sendable {
    // Sendable by construction: every property is set once in init.
    struct Call: Decodable, Equatable {
        struct Hints: Decodable, Equatable {
            var urgency: Int?
            var category: String?
        }
        var method: String
        var id: UInt32
        var app_name: String?
        var replaces_id: UInt32?
        var icon: String?
        var summary: String?
        var body: String?
        var actions: [String]?
        var hints: Hints?
        var expire_timeout: Int32?
    }

    static let script = Repository.root + "/Tests/DesktopTests/notification-recorder.py"
    let recordPath: String
    /// The bus's environment, not the bus: the bus keeps its recorders, and a reference back
    /// would keep both (and their processes) alive after the test.
    private let environment: [String: String]
    private let logPath: String
    private let process: ChildProcess

    init(bus: PrivateSessionBus, capabilities: [String]) throws {
        environment = bus.environment
        let name = bus.folder.path + "/notifications-\(UUID().uuidString)"
        recordPath = name + ".jsonl"
        logPath = name + ".log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process = try ChildProcess("/usr/bin/python3", [Self.script, "--record", recordPath, "--capabilities", capabilities.joined(separator: ",")],
                                   environment: environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a },
                                   output: .file(logPath), error: .file(logPath))
        try waitUntil("the recorder owns org.freedesktop.Notifications") { [process, logPath] in
            guard process.isRunning else {
                let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw TestFailure("notification-recorder.py exited with \(process.terminationStatus): \(log)")
            }
            return FileManager.default.fileExists(atPath: recordPath)
        }
    }

    func stop() {
        if process.isRunning { kill9(process) }
    }

    /// Every call so far, in order.
    func calls() throws -> [Call] {
        let text = try String(contentsOfFile: recordPath, encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Call.self, from: Data($0.utf8)) }
    }

    /// The person clicks the button `key` of notification `id` (the server then closes it).
    func invoke(id: UInt32, key: String) throws {
        try Shell.run("/usr/bin/dbus-send", ["--session", "--dest=org.freedesktop.Notifications", "--type=method_call",
                                             "--print-reply", "/org/freedesktop/Notifications",
                                             "org.instantupload.Test.Invoke", "uint32:\(id)", "string:\(key)"],
                      environment: environment)
    }
}

func kill9(_ process: ChildProcess) { Poll.kill9(process) }

/// Polls `condition` every 20 ms for up to `seconds`.
func waitUntil(_ what: String, seconds: Double = 30, _ condition: () throws -> Bool) throws {
    try Poll.until(what, seconds: seconds, condition)
}
