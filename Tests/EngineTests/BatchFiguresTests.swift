import Foundation
import Glibc
import Queue
import TestSupport
import Testing

/// The agent's side of `status`'s batch line: the rate it measures over the running
/// transfers, and where the batch starts, through the real programs.
@Suite("Batch figures from the agent")
struct BatchFiguresTests {
    static func json(_ result: Shell.Result) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout) \(result.stderr)")
    }

    @Test("during a throttled upload, status shows a rate and a time left, and status --json fills rate_bytes_per_s and eta_seconds")
    func rateAndTimeLeft() async throws {
        try await offThePool {
            let net = try TestNetwork()
            let server = try ReferenceServer(namespace: net.server, host: net.serverAddress)
            try server.makeFolder("Slow")
            let s = try AgentHarness()
            s.namespace = net.agent
            try s.writeConfig("[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 1\n")
            try s.addAccount(server)
            // 40 mbit/s is 5 MB/s: 300 MB keep it busy for a minute, long enough to look.
            try net.throttle("40mbit")
            let file = s.home.path + "/long.mov"
            let fd = open(file, O_WRONLY | O_CREAT, 0o644)
            ftruncate(fd, 300_000_000)
            close(fd)
            #expect(try s.cli(["upload", "--to", "/Slow", file]).status == 0)
            try s.startAgent()

            var line = ""
            var batch: [String: Any] = [:]
            let deadline = Date().addingTimeInterval(50)
            while true {
                line = try s.cli(["status"]).stdout
                batch = (try Self.json(try s.cli(["status", "--json"]))["batch"] as? [String: Any]) ?? [:]
                if line.contains("/s, about"), batch["rate_bytes_per_s"] is Double || batch["rate_bytes_per_s"] is Int,
                   batch["eta_seconds"] is Int {
                    break
                }
                if Date() >= deadline { break }
                usleep(300_000)
            }
            #expect(line.contains("1 uploading; 0 of 1 file") && line.contains("/s, about") && line.contains(" left"), "\(line)")
            let rate = (batch["rate_bytes_per_s"] as? NSNumber)?.doubleValue ?? 0
            // Bounded by the link: a rate of the bytes sent, not of something else.
            #expect(rate > 0 && rate < 15_000_000, "rate \(rate) for a 5 MB/s link")
            let eta = (batch["eta_seconds"] as? Int) ?? 0
            let left = ((batch["bytes_total"] as? Int) ?? 0) - ((batch["bytes_done"] as? Int) ?? 0)
            #expect(eta > 0 && abs(Double(eta) - Double(left) / rate) <= 1, "eta \(eta) s for \(left) bytes at \(rate) B/s")
            s.stopAgent()
        }
    }

    @Test("the batch starts again once the queue was idle: a retried old item is a batch of one; once idle the rate is gone")
    func batchResets() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Ok")
            let s = try AgentHarness()
            try s.addAccount(server)
            // An old item the server refused once, then a batch that went through.
            let refused = try s.home.randomFile("refused.bin", size: 1_000_000, seed: 7)
            try server.fault(["method": "POST", "status": 403, "count": 1])
            #expect(try s.cli(["upload", "--to", "/Ok", refused]).status == 0)
            try s.startAgent()
            try s.waitFor("the refusal") { $0.first?["state"] as? String == "failed" }
            let files = try (0..<3).map { try s.home.randomFile("ok\($0).bin", size: 200_000, seed: UInt64(10 + $0)) }
            #expect(try s.cli(["upload", "--to", "/Ok"] + files).status == 0)
            try s.waitFor("three done, one failed") { items in
                items.filter { $0["state"] as? String == "completed" }.count == 3 && items.contains { $0["state"] as? String == "failed" }
            }
            let store = try QueueStore(path: s.databasePath)
            let deadline = Date().addingTimeInterval(30)
            while try store.agentValue(QueueStore.rateKey) != nil, Date() < deadline { usleep(100_000) }
            #expect(try store.agentValue(QueueStore.rateKey) == nil, "no rate is left once nothing runs")

            // The old failed item goes again, held in flight: the batch is that one item, not
            // the history before it.
            let failed = try #require(try s.items().first { $0["state"] as? String == "failed" }?["id"] as? Int)
            try server.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 100_000])
            #expect(try s.cli(["retry", String(failed)]).status == 0)
            try PauseTests.waitUntilFaultTaken(server, s)
            var batch: [String: Any] = [:]
            let seen = Date().addingTimeInterval(30)
            while Date() < seen {
                batch = (try Self.json(try s.cli(["status", "--json"]))["batch"] as? [String: Any]) ?? [:]
                if batch["files_total"] as? Int == 1 { break }
                usleep(100_000)
            }
            #expect(batch["files_total"] as? Int == 1 && batch["files_done"] as? Int == 0, "\(batch)")
            try server.clearFaults()
            try s.waitForAll("completed", count: 4)

            // Idle again: the next upload starts a new batch.
            let later = try s.home.randomFile("later.bin", size: 200_000, seed: 20)
            #expect(try s.cli(["upload", "--to", "/Ok", later]).status == 0)
            try s.waitForAll("completed", count: 5)
            let status = try s.cli(["status"])
            #expect(status.stdout.hasPrefix("all done: 1 file,"), "\(status.stdout)")
        }
    }
}
