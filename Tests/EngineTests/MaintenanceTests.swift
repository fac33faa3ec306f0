import Foundation
import Glibc
import Queue
import TestSupport
import Testing

@Suite("A server in maintenance mode")
struct MaintenanceTests {
    /// Polls every row until `condition` holds for all of them, noting each row's reasons on the way.
    static func waitForRows(_ store: QueueStore, _ what: String, timeout: Double, seen: inout Set<String>,
                            _ condition: ([Transfer]) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let rows = try store.transfers()
            for row in rows { seen.insert("\(row.state.rawValue)/\(row.reason?.code.rawValue ?? "-")") }
            if condition(rows) { return }
            if Date() >= deadline { break }
            usleep(20_000)
        }
        throw TestFailure("timed out waiting for \(what); seen \(seen.sorted())")
    }

    @Test("in maintenance before anything is sent: the rows wait as maintenance without one request failing, nothing fails, and they go when it ends")
    func before() async throws {
        try await offThePool {
            let server = try ReferenceServer(face: .nextcloud)
            let s = try AgentHarness()
            try s.addAccount(address: server.address())
            let files = try (0..<3).map { try s.home.randomFile("m\($0).jpg", size: 200_000 + $0, seed: UInt64($0)) }
            #expect(try s.cli(["upload", "--to", "/", "--"] + files).status == 0)
            try server.setMaintenance(true)
            try s.startAgent()
            let store = try QueueStore(path: s.databasePath)
            var seen: Set<String> = []
            try Self.waitForRows(store, "every row waiting as maintenance", timeout: 30, seen: &seen) { rows in
                rows.allSatisfy { $0.state == .queued && $0.reason?.code == .maintenance }
            }
            let waiting = try store.transfers()
            #expect(waiting.allSatisfy { $0.attempts == 0 && $0.reason?.message.contains("Nextcloud is in maintenance mode") == true },
                    "said by status.php, not by a failed request: \(waiting.map { ($0.attempts, $0.reason?.message ?? "") })")
            usleep(2_000_000)
            #expect(try store.transfers().allSatisfy { $0.state == .queued && $0.attempts == 0 }, "nothing was tried meanwhile")
            #expect(!s.agentLog.contains("(503)"), "no transfer met a 503:\n\(s.agentLog.suffix(2000))")

            try server.setMaintenance(false)
            try s.waitForAll("completed", count: 3, timeout: 60)
            #expect(!seen.contains { $0.hasPrefix("failed") }, "\(seen)")
            for (i, file) in files.enumerated() {
                #expect(try TestData.sha256(ofFile: server.tree() + "/m\(i).jpg") == (try TestData.sha256(ofFile: file)))
            }
        }
    }

    @Test("maintenance starting while files go up: the 503 makes the agent ask status.php, the rows wait as maintenance, nothing fails, and they finish when it ends")
    func during() async throws {
        try await offThePool {
            let scene = try NextcloudScene(size: (20 << 20) + 5)
            try scene.slowEveryChunk()
            let store = try QueueStore(path: scene.session.databasePath)
            try scene.session.startAgent()
            var seen: Set<String> = []
            try Self.waitForRows(store, "a chunk confirmed", timeout: 30, seen: &seen) { rows in
                rows.allSatisfy { $0.checkpoint.offset >= 5 << 20 }
            }
            try scene.server.setMaintenance(true)
            try Self.waitForRows(store, "the row waiting as maintenance after status.php said so", timeout: 60, seen: &seen) { rows in
                rows.allSatisfy { $0.state == .queued && $0.reason?.code == .maintenance
                                  && $0.reason?.message.contains("Nextcloud is in maintenance mode") == true }
            }
            #expect(scene.session.agentLog.contains("is in maintenance mode; its transfers wait until it ends"))
            try scene.server.setMaintenance(false)
            try Self.waitForRows(store, "completed", timeout: 90, seen: &seen) { rows in rows.allSatisfy { $0.state == .completed } }
            #expect(!seen.contains { $0.hasPrefix("failed") }, "\(seen)")
            try scene.expectArrivedOnce()
        }
    }
}
