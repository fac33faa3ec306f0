import Foundation
import Platform
import Glibc

/// The misbehaving server (Tests/HostileServer/hostile_server.py) on loopback for one test,
/// with its decoy listener on another loopback address standing for "another host".
public final class HostileServer: @unchecked Sendable {
    // Sendable by construction: every field is set in init and only read afterwards.
    public let baseURL: String
    /// The decoy's base URL (`http://127.0.0.2:PORT`): a host the agent must never contact.
    public let decoyURL: String
    public let user = "alice"
    public let password = "wonderland"
    private let process: ChildProcess

    public static let script = Repository.root + "/Tests/HostileServer/hostile_server.py"

    public init(decoyHost: String = "127.0.0.2") throws {
        let python = "/usr/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestFailure("the hostile server needs \(python): run `make test` to install it")
        }
        let process = try ChildProcess(python, [Self.script, "--host", "127.0.0.1", "--decoy-host", decoyHost, "--user", "\(user):\(password)"],
                                       output: .pipe)
        self.process = process
        let handle = process.standardOutput!
        var buffer = Data()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            let text = String(decoding: buffer, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("READY ") }) {
                let parts = line.split(separator: " ")
                guard parts.count == 3 else { break }
                baseURL = String(parts[1])
                decoyURL = String(parts[2])
                return
            }
        }
        process.stop()
        throw TestFailure("the hostile server did not start (output: \(String(decoding: buffer, as: UTF8.self)))")
    }

    deinit {
        process.stop()
    }

    public var tusURL: String { baseURL + "/files/" }
    public var webdavURL: String { baseURL + "/dav/\(user)/" }

    /// Makes one kind of reply absurd, e.g. `("retry-after", "inf")`; `"sane"` ends it.
    /// `extra` carries the scenario's other numbers (`sent`: body bytes of a download).
    public func misbehave(_ name: String, _ value: String = "", status: Int? = nil, extra: [String: Int] = [:]) throws {
        var spec: [String: Any] = extra
        spec["name"] = name
        spec["value"] = value
        if let status { spec["status"] = status }
        let body = String(decoding: try JSONSerialization.data(withJSONObject: spec), as: UTF8.self)
        let r = try Shell.capture("/usr/bin/curl", ["-s", "-f", "-X", "POST", "--data-binary", body, baseURL + "/_control/scenario"])
        guard r.status == 0 else { throw TestFailure("the hostile server refused the scenario \(name): \(r.stderr)") }
    }

    /// What both listeners saw: the main one's requests as `METHOD path`, the decoy's with
    /// the `Authorization` header it received (nil when none).
    public func stats() throws -> (requests: [String], decoy: [(request: String, authorization: String?)]) {
        let (requests, decoy) = try rawStats()
        return (requests.map(\.request), decoy)
    }

    /// The main listener's requests with the `Range` and `If-Range` headers they carried.
    public func rangeHeaders() throws -> [(request: String, range: String?, ifRange: String?)] {
        try rawStats().requests
    }

    private func rawStats() throws -> (requests: [(request: String, range: String?, ifRange: String?)],
                                       decoy: [(request: String, authorization: String?)]) {
        let r = try Shell.capture("/usr/bin/curl", ["-s", "-f", baseURL + "/_control/stats"])
        guard r.status == 0, let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("the hostile server's stats are unreadable: \(r.stdout) \(r.stderr)")
        }
        let requests = (object["requests"] as? [[Any]] ?? []).map { entry in
            (request: "\(entry.first ?? "") \(entry.dropFirst().first ?? "")", range: entry.dropFirst(2).first as? String,
             ifRange: entry.dropFirst(3).first as? String)
        }
        let decoy = (object["decoy_requests"] as? [[Any]] ?? []).map { entry in
            (request: "\(entry.first ?? "") \(entry.dropFirst().first ?? "")", authorization: entry.last as? String)
        }
        return (requests, decoy)
    }
}
