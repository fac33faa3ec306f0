import CLI
import Foundation
import Queue
import TestSupport
import Testing

/// The hostile server, a person's session with an account on it, and one queued transfer:
/// an upload of a small file into `/In` (with tus, or with one WebDAV PUT), or a download of
/// the server's `/data.bin`. The server answers sanely until the test picks its
/// misbehaviour; the agent is not running yet.
struct HostileScene: Sendable {
    let server: HostileServer
    let session: AgentHarness
    let id: Int

    static func upload() async throws -> HostileScene {
        try await offThePool { try HostileScene(download: false, put: false) }
    }

    /// An upload with one WebDAV PUT: the account is added by its address while the server
    /// hides its tus endpoint, so discovery settles on `webdav-put`.
    static func putUpload() async throws -> HostileScene {
        try await offThePool { try HostileScene(download: false, put: true) }
    }

    static func download() async throws -> HostileScene {
        try await offThePool { try HostileScene(download: true, put: false) }
    }

    private init(download: Bool, put: Bool) throws {
        server = try HostileServer()
        session = try AgentHarness()
        // Every file made is looked at afterwards, so a server that lies about it is caught.
        try session.writeConfig(agentConfig(checkEveryUpload: true))
        var account = ["account", "add", "--webdav", server.webdavURL, "--tus", server.tusURL]
        if put {
            try server.misbehave("no-tus")
            account = ["account", "add", server.webdavURL]
        }
        let added = try session.cli(account + ["--user", server.user, "--name", "home", "--password-stdin"], stdin: server.password + "\n")
        guard added.status == 0 else { throw TestFailure("account add failed (\(added.status)): \(added.stderr)") }
        if put {
            let method = try session.cli(["account", "list", "--json"]).stdout
            guard method.contains("\"upload_protocol\":\"webdav-put\"") || method.contains("\"upload_protocol\" : \"webdav-put\"") else {
                throw TestFailure("the account does not upload with PUT: \(method)")
            }
            try server.misbehave("sane")
        }
        let queued: Shell.Result
        if download {
            queued = try session.cli(["download", "/data.bin"])
        } else {
            let file = try session.home.randomFile("pictures/IMG_0001.jpg", size: 300_000, seed: 3)
            queued = try session.cli(["upload", "--to", "/In", file])
        }
        guard queued.status == 0, let first = try session.items().first, let id = first["id"] as? Int else {
            throw TestFailure("nothing queued (\(queued.status)): \(queued.stdout) \(queued.stderr)")
        }
        self.id = id
    }

    func misbehave(_ name: String, _ value: String = "", status: Int? = nil, extra: [String: Int] = [:]) async throws {
        try await offThePool { try server.misbehave(name, value, status: status, extra: extra) }
    }

    /// What the download folder holds (`.part` files included); empty when it is not there.
    func downloadedNames() throws -> [String] {
        guard FileManager.default.fileExists(atPath: session.downloads) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: session.downloads)
    }

    /// Nothing under the final name, and no byte of the refused reply in a partial file.
    func expectNothingKept(sourceLocation: SourceLocation = #_sourceLocation) throws {
        for name in try downloadedNames() {
            let size = (try FileManager.default.attributesOfItem(atPath: session.downloads + "/" + name)[.size] as? Int) ?? -1
            #expect(name.hasSuffix(".part") && size == 0, "the download folder holds \(name) (\(size) bytes)", sourceLocation: sourceLocation)
        }
    }

    func startAgent() async throws { try await offThePool { try session.startAgent() } }
    func requests() async throws -> [String] { try await offThePool { try server.stats().requests } }
    func decoy() async throws -> [(request: String, authorization: String?)] { try await offThePool { try server.stats().decoy } }
    var agentLog: String { session.agentLog }

    /// The row as `show ID --json` prints it.
    func row(_ store: QueueStore) throws -> [String: Any]? {
        guard let transfer = try store.transfer(id: Int64(id)) else { return nil }
        return try JSONSerialization.jsonObject(with: Data(JSONOutput.encode(TransferJSON(transfer)).utf8)) as? [String: Any]
    }

    /// Waits for the row to reach `state` with `code`, and fails with the states it went through.
    @discardableResult
    func verdict(_ state: String, _ code: String?, timeout: Double = 40) async throws -> [String: Any] {
        let store = try QueueStore(path: session.databasePath)
        let deadline = Date().addingTimeInterval(timeout)
        var seen: [String] = []
        while true {
            if let row = try row(store) {
                let note = "\(row.rowState ?? "?")/\(row.rowReasonCode ?? "-")"
                if seen.last != note { seen.append(note) }
                if row.rowState == state && row.rowReasonCode == code { return row }
            }
            if Date() >= deadline { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("timed out waiting for \(state)/\(code ?? "-"); row \(id) went \(seen.suffix(20)); agent log:\n\(agentLog.suffix(3000))")
    }

    /// The row failed as `protocol`, its message quotes the server, the agent is still up,
    /// and the server hears nothing more about it.
    @discardableResult
    func expectProtocolFailure(quoting words: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let row = try await verdict("failed", "protocol")
        #expect(row.rowReasonMessage?.contains(words) == true, "the reason quotes the server's `\(words)`: \(row.rowReason ?? [:])",
                sourceLocation: sourceLocation)
        try await expectQuietAndAlive(sourceLocation: sourceLocation)
        return row
    }

    /// Answers with 503 and `Retry-After: value` (beyond an hour), starts the agent, and
    /// expects the row to wait one hour, its reason showing the server's words and the cap.
    func expectCappedRetryAfter(_ value: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await misbehave("retry-after", value, status: 503)
        let started = Date()
        try await startAgent()
        let row = try await verdict("retrying", "maintenance")
        let next = try #require(row.rowNextAttempt, "a retrying row says when: \(row)", sourceLocation: sourceLocation)
        #expect(next >= started.addingTimeInterval(3590) && next <= Date().addingTimeInterval(3610),
                "the wait is capped at one hour: next attempt \(next), started \(started)", sourceLocation: sourceLocation)
        #expect(row.rowReasonMessage?.contains(value) == true && row.rowReasonMessage?.contains("1 h") == true,
                "the reason shows the server's words and the cap: \(row.rowReason ?? [:])", sourceLocation: sourceLocation)
    }

    /// For a few seconds: the agent process runs, and no request reaches the server.
    func expectQuietAndAlive(seconds: Double = 2, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let before = try await requests().count
        try await Task.sleep(for: .seconds(seconds))
        let after = try await requests()
        #expect(after.count == before, "the agent went on talking to the server: \(after.suffix(after.count - before))",
                sourceLocation: sourceLocation)
        #expect(session.agentIsRunning, "the agent process is still up; its log:\n\(agentLog.suffix(2000))", sourceLocation: sourceLocation)
    }
}
