import Foundation
import Platform
import Glibc

/// A Secret Service on a test's bus (secret-service.py beside this file): holds the items
/// the test gives it, can be locked and unlocked, and records every call it answers.
public final class SecretServiceStandIn: @unchecked Sendable {
    // Sendable by construction: every property is set once in init.
    public struct Call: Decodable, Equatable, Sendable {
        public var method: String
        public var attributes: [String: String]?
    }

    static let script = Repository.root + "/Tests/TestSupport/secret-service.py"
    public let recordPath: String
    private let environment: [String: String]
    private let logPath: String
    private let process: ChildProcess

    /// Starts it on `bus` holding `items` (attributes and the secret) and waits until it
    /// owns org.freedesktop.secrets.
    public init(bus: SessionBusDaemon, items: [([String: String], String)], locked: Bool = false) throws {
        environment = bus.environment
        let name = bus.folder.path + "/secrets-\(UUID().uuidString)"
        recordPath = name + ".jsonl"
        logPath = name + ".log"
        var arguments = [Self.script, "--record", recordPath]
        for (attributes, secret) in items {
            arguments += ["--item", attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + ":" + secret]
        }
        if locked { arguments.append("--locked") }
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process = try ChildProcess("/usr/bin/python3", arguments, environment: environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a },
                                   output: .file(logPath), error: .file(logPath))
        // A Python start with dbus and GLib: seconds on a machine busy with a sanitized suite.
        try Poll.until("the stand-in owns org.freedesktop.secrets", seconds: 30) { [process, logPath, recordPath] in
            guard process.isRunning else {
                let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw TestFailure("secret-service.py exited with \(process.terminationStatus): \(log)")
            }
            return FileManager.default.fileExists(atPath: recordPath)
        }
    }

    deinit { stop() }

    public func stop() {
        if process.isRunning { Poll.kill9(process) }
    }

    /// An item as `instant-upload` stores it for the account `account`.
    public static func password(_ password: String, account: String) -> ([String: String], String) {
        (["service": "instant-upload", "account": account], password)
    }

    /// Every call so far, in order.
    public func calls() throws -> [Call] {
        let text = try String(contentsOfFile: recordPath, encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Call.self, from: Data($0.utf8)) }
    }

    /// How many times the password of `account` was looked for.
    public func lookups(of account: String) throws -> Int {
        try calls().filter { $0.method == "SearchItems" && $0.attributes?["account"] == account }.count
    }

    public func unlock() throws { try test("Unlock") }
    public func lock() throws { try test("Lock") }

    /// The person saves a new password in the keyring.
    public func setPassword(_ password: String, account: String) throws {
        try test("SetSecret", ["dict:string:string:service,instant-upload,account,\(account)", "string:\(password)"])
    }

    private func test(_ member: String, _ arguments: [String] = []) throws {
        try Shell.run("/usr/bin/dbus-send", ["--session", "--dest=org.freedesktop.secrets", "--type=method_call", "--print-reply",
                                             "/org/freedesktop/secrets", "org.instantupload.Test.\(member)"] + arguments,
                      environment: environment)
    }
}
