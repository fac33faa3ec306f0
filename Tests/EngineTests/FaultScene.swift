import CLI
import Foundation
import Glibc
import Queue
import TestSupport
import Testing

// Shared pieces of FailureReasonTests and InterruptionTests: one server, one person, one
// queued file, and ways to read the row and the server while faults play out.

let oneMiB = 1 << 20

/// The agent's settings for these tests: started by the test, 1 MiB chunks, a short stall
/// limit; `checkEveryUpload`: the server is asked about every file made.
func agentConfig(stallSeconds: Int = 2, checkEveryUpload: Bool = false) -> String {
    "[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 1\nstall_seconds = \(stallSeconds)\ncheck_every_upload = \(checkEveryUpload)\n"
}

/// Runs blocking work (processes, reads of a pipe, sleeps) on a thread of its own. Swift Testing
/// runs these tests at once on a cooperative pool as wide as the machine has cores (two
/// here); tests that block it would run two at a time. The work stays in the test's task (its
/// executor is a thread of its own), so an expectation that fails in it is reported under the
/// test's name.
func offThePool<T>(_ body: @escaping () throws -> T) async throws -> T {
    let work = HandedOver(body)
    return try await withTaskExecutorPreference(ThreadPerJob.shared) { try work.value() }
}

/// A task executor that runs each job it is given on a new thread.
final class ThreadPerJob: TaskExecutor {
    static let shared = ThreadPerJob()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread { job.runSynchronously(on: executor) }.start()
    }
}

/// Hands a value to the thread `offThePool` runs it on; the caller awaits it meanwhile, so the
/// value is never used from two threads at once.
struct HandedOver<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

/// A reference server, a session with the account `home` on it, and one file queued for
/// `/In` (or another folder). The agent is not running yet, so faults set now catch its
/// very first request.
struct UploadScene: Sendable {
    let server: ReferenceServer
    let session: AgentHarness
    let file: String
    let name: String
    let folder: String
    let size: Int
    let id: Int

    static func make(size: Int, seed: UInt64 = 7, name: String = "IMG_0001.jpg", folder: String = "In", makeFolder: Bool = true,
                     serverArguments: [String] = [], stallSeconds: Int = 2) async throws -> UploadScene {
        try await offThePool {
            try UploadScene(size: size, seed: seed, name: name, folder: folder, makeFolder: makeFolder,
                            serverArguments: serverArguments, stallSeconds: stallSeconds)
        }
    }

    private init(size: Int, seed: UInt64, name: String, folder: String, makeFolder: Bool,
                 serverArguments: [String], stallSeconds: Int) throws {
        server = try ReferenceServer(arguments: serverArguments)
        if makeFolder { try server.makeFolder(folder) }
        session = try AgentHarness()
        try session.writeConfig(agentConfig(stallSeconds: stallSeconds))
        try session.addAccount(server)
        self.name = name
        self.folder = folder
        self.size = size
        file = try session.home.randomFile("pictures/\(name)", size: size, seed: seed)
        let r = try session.cli(["upload", "--to", "/" + folder, file])
        guard r.status == 0 else { throw TestFailure("upload failed (\(r.status)): \(r.stderr)") }
        guard let first = try session.items().first, let id = first["id"] as? Int else {
            throw TestFailure("nothing queued: \(r.stdout) \(r.stderr)")
        }
        self.id = id
    }

    /// Where the finished upload lands on the server.
    var serverCopy: String { server.tree() + "/\(folder)/\(name)" }


    // MARK: The person's side

    func startAgent() async throws { try await offThePool { try session.startAgent() } }
    func killAgent() async throws { try await offThePool { session.killAgent() } }
    func cli(_ arguments: [String]) async throws -> Shell.Result { try await offThePool { try session.cli(arguments) } }
    func sha256(_ path: String) async throws -> String { try await offThePool { try TestData.sha256(ofFile: path) } }
    var agentLog: String { session.agentLog }

    /// `show ID --json`, or nil when the row is gone.
    func row() async throws -> [String: Any]? {
        let r = try await cli(["show", String(id), "--json"])
        guard r.status == 0 else {
            if r.stderr.contains("there is no transfer") { return nil }
            throw TestFailure("show \(id) --json failed (\(r.status)): \(r.stderr)")
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("show --json is not an object: \(r.stdout.prefix(300))")
        }
        return object
    }

    func requireRow() async throws -> [String: Any] {
        guard let row = try await row() else { throw TestFailure("row \(id) is gone; agent log:\n\(agentLog.suffix(2000))") }
        return row
    }

    /// What one sighting of the row looked like, and when the polls around it ran.
    struct Sighting {
        var row: [String: Any]
        /// When the poll before this one started: the row was not yet like this then.
        var before: Date
        /// When this poll had read the row: it was like this by then.
        var at: Date
    }

    /// The row as `show ID --json` prints it, read in this process through the same
    /// `TransferJSON`: a poll costs a millisecond instead of a process, so short states
    /// (a retry 0.1 s away) are seen even on a busy machine.
    func peek(_ store: QueueStore) throws -> [String: Any]? {
        guard let transfer = try store.transfer(id: Int64(id)) else { return nil }
        let text = JSONOutput.encode(TransferJSON(transfer))
        return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// Polls the row until `condition` holds; fails with the states it went through and the agent's log.
    @discardableResult
    func watch(_ what: String, timeout: Double = 30, _ condition: ([String: Any]) -> Bool) async throws -> Sighting {
        let store = try QueueStore(path: session.databasePath)
        let deadline = Date().addingTimeInterval(timeout)
        // Until a poll has seen the row otherwise, nothing is known of when it got this way
        // (on a loaded machine the agent can be quicker than the first poll).
        var before = Date.distantPast
        var seen: [String] = []
        while true {
            let started = Date()
            let row = try peek(store)
            let at = Date()
            if let row {
                let note = "\(row.rowState ?? "?")/\(row.rowReasonCode ?? "-")/\(row.rowAttempts)"
                if seen.last != note { seen.append(note) }
                if condition(row) { return Sighting(row: row, before: before, at: at) }
            } else if seen.last != "gone" {
                seen.append("gone")
            }
            before = started
            if Date() >= deadline { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("timed out waiting for \(what); row \(id) went \(seen.suffix(30)); agent log:\n\(agentLog.suffix(3000))")
    }

    /// Waits until `show ID` no longer finds the row.
    func waitUntilGone(timeout: Double = 20) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        var last: [String: Any]?
        while true {
            last = try await row()
            if last == nil { return }
            if Date() >= deadline { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("row \(id) still there: \(last ?? [:]); agent log:\n\(agentLog.suffix(2000))")
    }

    /// Waits for the row to complete and checks the server's copy byte for byte, and that
    /// there is only one.
    func expectCompletedIdentical(timeout: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await watch("completed", timeout: timeout) { $0.rowState == "completed" }
        let copy = try await sha256(serverCopy), source = try await sha256(file)
        #expect(copy == source, "the server's copy differs from the source", sourceLocation: sourceLocation)
        let names = try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/" + folder)
        #expect(names == [name], "exactly one copy on the server, got \(names)", sourceLocation: sourceLocation)
    }

    /// A transient reason: the row is `retrying` with `code`, a next attempt after the moment
    /// it stopped, at least `attempts` attempts; with `retryAfter`, the next attempt is that
    /// many seconds after it stopped.
    @discardableResult
    func expectRetrying(_ code: String, attempts: Int = 1, retryAfter: Double? = nil, timeout: Double = 30,
                        sourceLocation: SourceLocation = #_sourceLocation) async throws -> Sighting {
        let s = try await watch("retrying \(code) after \(attempts) attempt(s)", timeout: timeout) {
            $0.rowState == "retrying" && $0.rowReasonCode == code && $0.rowAttempts >= attempts
        }
        let next = try #require(s.row.rowNextAttempt, "a retrying row says when it tries again: \(s.row)",
                                sourceLocation: sourceLocation)
        // The row was not in this retrying episode at `before`, so the agent set it later.
        if let retryAfter, s.before == .distantPast {
            // Seen retrying on the first look: the agent's own account of the wait says it.
            #expect(agentLog.contains(String(format: "retrying in %.1f s", retryAfter)) && next <= s.at.addingTimeInterval(retryAfter + 0.3),
                    "Retry-After \(retryAfter) s: next attempt \(next); agent log:\n\(agentLog.suffix(1500))", sourceLocation: sourceLocation)
        } else if let retryAfter {
            #expect(next >= s.before.addingTimeInterval(retryAfter - 0.3) && next <= s.at.addingTimeInterval(retryAfter + 0.3),
                    "Retry-After \(retryAfter) s: next attempt \(next), row went retrying between \(s.before) and \(s.at)",
                    sourceLocation: sourceLocation)
        } else {
            #expect(next > s.before, "the next attempt \(next) lies after the failure (seen \(s.before)...\(s.at))",
                    sourceLocation: sourceLocation)
            #expect(next <= s.at.addingTimeInterval(61), "backoff is capped near 60 s: \(next)", sourceLocation: sourceLocation)
        }
        #expect(s.row.rowReasonMessage?.isEmpty == false, sourceLocation: sourceLocation)
        return s
    }

    /// A permanent reason: the row is `failed` with `code`, and stays so for `seconds` while
    /// the server hears nothing more from the agent.
    @discardableResult
    func expectFailedForGood(_ code: String, seconds: Double = 3, timeout: Double = 30,
                             sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let s = try await watch("failed \(code)", timeout: timeout) { $0.rowState == "failed" }
        #expect(s.row.rowReasonCode == code, "reason \(s.row.rowReason ?? [:])", sourceLocation: sourceLocation)
        #expect(s.row.rowNextAttempt == nil, "a failed row has no next attempt: \(s.row)", sourceLocation: sourceLocation)
        let requestsThen = try await requestTotal()
        let until = Date().addingTimeInterval(seconds)
        while Date() < until {
            try await Task.sleep(for: .milliseconds(500))
            let row = try await requireRow()
            #expect(row.rowState == "failed" && row.rowReasonCode == code, "left failed by itself: \(row)", sourceLocation: sourceLocation)
            if row.rowState != "failed" { break }
        }
        let requestsNow = try await requestTotal()
        #expect(requestsNow == requestsThen, "the agent kept talking to the server after a permanent failure: \(requestsThen) -> \(requestsNow) requests; agent log:\n\(agentLog.suffix(1500))",
                sourceLocation: sourceLocation)
        return s.row
    }

    /// Overwrites the file in place (same inode, same size) with other bytes.
    func rewriteInPlace(seed: UInt64) throws {
        try rewriteInPlace(with: TestData.bytes(count: size, seed: seed))
    }

    /// Overwrites the file in place with `bytes` made beforehand, so that the write itself
    /// is quick even on a loaded machine.
    func rewriteInPlace(with bytes: [UInt8]) throws {
        let fd = open(file, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("cannot open \(file) for writing") }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress!, $0.count, 0) }
        guard written == size else { throw TestFailure("short write to \(file)") }
    }

    /// The resume counters of the row's last run satisfy the issue's bound: nothing the
    /// server already had is read or hashed again, beyond one chunk.
    func expectResumeCounters(chunk: Int = oneMiB, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let row = try await requireRow()
        let counters = try #require(row["counters"] as? [String: Any], "show --json has counters: \(row)", sourceLocation: sourceLocation)
        let resumedAt = try #require(counters["resumed_at"] as? Int, sourceLocation: sourceLocation)
        let bytesRead = try #require(counters["bytes_read"] as? Int, sourceLocation: sourceLocation)
        let bytesHashed = try #require(counters["bytes_hashed"] as? Int, sourceLocation: sourceLocation)
        #expect(resumedAt > 0, "the last run resumed from the server's offset, not from zero: \(counters)", sourceLocation: sourceLocation)
        let bound = (size - resumedAt) + chunk
        #expect(bytesRead <= bound, "bytes_read \(bytesRead) > (size \(size) - resumed_at \(resumedAt)) + chunk \(chunk) = \(bound)",
                sourceLocation: sourceLocation)
        #expect(bytesHashed <= bound, "bytes_hashed \(bytesHashed) > (size \(size) - resumed_at \(resumedAt)) + chunk \(chunk) = \(bound)",
                sourceLocation: sourceLocation)
        #expect(bytesHashed >= size - resumedAt, "the hash covered at least what was sent: \(counters)", sourceLocation: sourceLocation)
    }

    // MARK: The server's side

    func fault(_ spec: [String: Any]) async throws { try await faults([spec]) }

    /// Adds faults in order: the first matching one with uses left acts.
    func faults(_ list: [[String: Any]]) async throws {
        let json = HandedOver(list)
        try await offThePool { _ = try server.control("POST", "faults", json: json.value) }
    }

    func clearFaults() async throws { try await offThePool { try server.clearFaults() } }
    func setQuota(_ bytes: Int?) async throws { try await offThePool { try server.setQuota(availableBytes: bytes) } }
    func stopServer() async throws { try await offThePool { server.stop() } }
    func killServer() async throws { try await offThePool { server.kill() } }
    func restartServer() async throws { try await offThePool { try server.restart() } }

    /// The server's request counts by method.
    func requestCounts() async throws -> [String: Int] {
        let stats = try await offThePool { HandedOver(try server.stats()) }
        let requests = stats.value["requests"] as? [String: Any] ?? [:]
        return requests.compactMapValues { $0 as? Int }
    }

    /// All `/files/` and `/dav/` requests the server has seen.
    func requestTotal() async throws -> Int { try await requestCounts().values.reduce(0, +) }
    func requests(_ method: String) async throws -> Int { try await requestCounts()[method] ?? 0 }

    /// Waits until every fault has been taken by a request (a stall is then under way).
    func waitForFaultsTaken(timeout: Double = 30) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = try await offThePool { (try server.control("GET", "faults") as? [Any])?.count ?? 0 }
            if left == 0 { return }
            if Date() >= deadline { break }
            try await Task.sleep(for: .milliseconds(30))
        }
        throw TestFailure("the faults were not reached within \(timeout) s; agent log:\n\(agentLog.suffix(2000))")
    }

    /// Unfinished tus uploads the server keeps for alice (their `.info` files).
    func serverUploads() -> [String] {
        let dir = server.data.path + "/tus/alice"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.filter { $0.hasSuffix(".info") }.map { String($0.dropLast(".info".count)) }.sorted()
    }

    /// HEAD on an upload's URL, as the account's owner; the status code.
    func headStatus(ofUpload uid: String) async throws -> Int {
        let url = server.tusURL + uid
        let r = try await offThePool {
            try Shell.capture("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-I", "-u", "alice:wonderland",
                                                "-H", "Tus-Resumable: 1.0.0", url])
        }
        return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}

/// Reading `show --json` / `queue --json` rows.
extension Dictionary where Key == String, Value == Any {
    var rowState: String? { self["state"] as? String }
    var rowReason: [String: Any]? { self["reason"] as? [String: Any] }
    var rowReasonCode: String? { rowReason?["code"] as? String }
    var rowReasonMessage: String? { rowReason?["message"] as? String }
    var rowReasonAction: String? { rowReason?["action"] as? String }
    var rowAttempts: Int { self["attempts"] as? Int ?? 0 }
    var rowNextAttempt: Date? { (self["next_attempt_at"] as? String).flatMap(parseISO8601Timestamp) }
    var rowCounters: [String: Any] { self["counters"] as? [String: Any] ?? [:] }
}

func parseISO8601Timestamp(_ text: String) -> Date? {
    let f = ISO8601DateFormatter()
    f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let d = f.date(from: text) { return d }
    f.formatOptions = [.withInternetDateTime]
    return f.date(from: text)
}
