import Foundation
import Platform
import Glibc
import TestSupport
import Testing

@Suite("Uploads end to end, against the reference server")
struct FirstUploadTests {
    @Test("a file given to the CLI arrives byte-identical and the queue shows it completed with its time")
    func uploadOne() throws {
        let server = try ReferenceServer()
        try server.makeFolder("Photos")
        let session = try AgentHarness()
        try session.addAccount(server)
        let file = try session.home.randomFile("pictures/IMG 0001.jpg", size: 3_000_000)
        try session.startAgent()
        let r = try session.cli(["upload", "--to", "/Photos", file])
        #expect(r.status == 0, "\(r.stderr)")
        try session.waitForAll("completed", count: 1)
        let item = try #require(try session.items().first)
        #expect(item["completed_at"] as? String != nil)
        #expect(item["target"] as? String == "/Photos/IMG 0001.jpg")
        #expect(try TestData.sha256(ofFile: server.tree() + "/Photos/IMG 0001.jpg") == TestData.sha256(ofFile: file))
        #expect(item["sha256"] as? String == (try TestData.sha256(ofFile: file)))
        let queue = try session.cli(["queue"])
        #expect(queue.stdout.contains("IMG 0001.jpg"))
        #expect(queue.stdout.lowercased().contains("completed"))
    }

    @Test("400 files queued with no agent survive the enqueuer's SIGKILL and all arrive once the agent starts")
    func durableBeforeNetwork() throws {
        let server = try ReferenceServer()
        try server.makeFolder("Import")
        let session = try AgentHarness()
        try session.addAccount(server)
        var files: [String] = []
        for i in 0..<400 { files.append(try session.home.file("import/file-\(i).txt", bytes: Array("file number \(i)\n".utf8))) }
        try server.control("POST", "stats/reset")

        // Run the enqueuer and kill it the moment it reports success.
        let process = try ChildProcess(Repository.binaries + "/instant-upload", ["upload", "--to", "/Import"] + files,
                                       environment: session.environment, output: .pipe)
        var said = Data()
        while !String(decoding: said, as: UTF8.self).contains("queued") {
            let chunk = process.standardOutput!.availableData
            if chunk.isEmpty { break }
            said.append(chunk)
        }
        process.send(SIGKILL)
        process.waitUntilExit()
        #expect(String(decoding: said, as: UTF8.self).contains("queued 400"))

        // Nothing reached the server before the agent ran.
        let requests = (try server.stats()["requests"] as? [String: Any]) ?? [:]
        #expect(requests.values.compactMap { $0 as? Int }.reduce(0, +) == 0, "requests before the agent: \(requests)")
        #expect(try session.items().count == 400)

        try session.startAgent()
        try session.waitForAll("completed", count: 400, timeout: 180)
        for i in [0, 199, 399] {
            let copy = try String(contentsOfFile: server.tree() + "/Import/file-\(i).txt", encoding: .utf8)
            #expect(copy == "file number \(i)\n")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Import")
        #expect(names.count == 400)
        // The transfers draw on kept connections: a new one per file (and per protocol) would
        // make 400 or more, each over TLS a handshake.
        let connections = try #require(try server.stats()["connections"] as? Int)
        #expect(connections <= 24, "400 files over \(connections) connections")
    }

    @Test("a second agent for the same person refuses with a clear message")
    func singleAgent() throws {
        let session = try AgentHarness()
        try session.startAgent()
        let r = try session.cli(["run"])
        #expect(r.status == 3)
        #expect(r.stderr.contains("already running"))
        session.stopAgent()
        #expect(!session.agentIsRunning)
    }

    @Test("the CLI, share-to and the agent write the database at once for 10 s without a lock error or a lost row")
    func concurrentWriters() throws {
        let server = try ReferenceServer()
        try server.makeFolder("Busy")
        let session = try AgentHarness()
        try session.addAccount(server)
        try session.startAgent()
        let deadline = Date().addingTimeInterval(10)
        let group = DispatchGroup()
        let errors = LockedList()
        let queuedCount = LockedList()
        for writer in 0..<2 {
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                var n = 0
                // For 10 s, and at least 8 rounds each: on a loaded machine a writer may
                // only get going after the 10 s are over.
                while Date() < deadline || n < 8 {
                    do {
                        let path = try session.home.file("busy/\(writer)-\(n).txt", bytes: Array("w\(writer) n\(n)".utf8))
                        let r = writer == 0
                            ? try session.cli(["upload", "--to", "/Busy", path])
                            : try session.shareTo(["--to", "/Busy", path])
                        if r.status != 0 || r.stderr.contains("locked") { errors.append("\(writer)/\(n): \(r.status) \(r.stderr)") }
                        else { queuedCount.append(path) }
                        // The reader side: status and queue at the same time.
                        let s = try session.cli(["status"])
                        if s.stderr.contains("locked") { errors.append("status: \(s.stderr)") }
                    } catch { errors.append("\(error)") }
                    n += 1
                }
            }
        }
        group.wait()
        #expect(errors.items.isEmpty, "\(errors.items.prefix(5))")
        try session.waitForAll("completed", count: queuedCount.items.count, timeout: 120)
        #expect(queuedCount.items.count > 10)
    }
}

final class LockedList: @unchecked Sendable {
    // Sendable by construction: every access goes through `lock`.
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ s: String) { lock.lock(); storage.append(s); lock.unlock() }
    var items: [String] { lock.lock(); defer { lock.unlock() }; return storage }
}
