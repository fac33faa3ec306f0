import Foundation
import TestSupport
import Testing

@Suite("The agent's notifications, end to end")
struct AgentNotificationTests {
    @Test("failures arrive as one notification per batch, and its Retry button retries them")
    func failedBatchAndRetry() throws {
        let bus = try PrivateSessionBus()
        let recorder = try bus.startRecorder()
        let server = try ReferenceServer()
        try server.makeFolder("Photos")
        let session = try AgentHarness(extraEnvironment: bus.environment)
        try session.addAccount(server)
        let a = try session.home.randomFile("IMG_0042.jpg", size: 200_000, seed: 1)
        let b = try session.home.randomFile("IMG_0043.jpg", size: 200_000, seed: 2)
        try server.setQuota(availableBytes: 1000)
        try session.cli(["upload", "--to", "/Photos", a, b])
        try session.startAgent()
        try session.waitFor("both failed") { $0.count == 2 && $0.allSatisfy { $0["state"] as? String == "failed" } }
        try waitUntil("a notification about the failures") { try recorder.calls().contains { $0.method == "Notify" } }
        let notes = try recorder.calls().filter { $0.method == "Notify" }
        let failure = try #require(notes.first)
        #expect(failure.summary?.hasPrefix("2 uploads need attention") == true, "\(String(describing: failure.summary))")
        #expect((failure.summary ?? "") + (failure.body ?? "") + "" != "")
        #expect(failure.actions?.contains("retry") == true)
        #expect(notes.filter { $0.summary?.contains("attention") == true }.count == 1, "one notification for the batch")

        // The person frees space and clicks Retry.
        try server.setQuota(availableBytes: nil)
        try recorder.invoke(id: failure.id, key: "retry")
        try session.waitForAll("completed", count: 2, timeout: 30)
        try waitUntil("a done notification") {
            try recorder.calls().contains { $0.method == "Notify" && ($0.summary ?? "").contains("uploaded to home:/Photos") }
        }
    }

    @Test("a file saved at the name while the upload ran: the done notification names the name ours got")
    func doneNamesTheNameItGot() throws {
        let bus = try PrivateSessionBus()
        let recorder = try bus.startRecorder()
        let server = try ReferenceServer()
        try server.makeFolder("Photos")
        let session = try AgentHarness(extraEnvironment: bus.environment)
        try session.writeConfig("[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 1\nstall_seconds = 300\n")
        try session.addAccount(server)
        let photo = try session.home.randomFile("IMG_0042.jpg", size: 3 << 20, seed: 1)
        try server.fault(["method": "PATCH", "stall_seconds": 200, "after_bytes": 100_000])
        try session.cli(["upload", "--to", "/Photos", photo])
        try session.startAgent()
        try waitUntil("the upload under way") { (try server.control("GET", "faults") as? [Any])?.isEmpty == true }
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: server.tree() + "/Photos/IMG_0042.jpg"))
        try server.clearFaults()
        try session.waitForAll("completed", count: 1, timeout: 60)
        try waitUntil("a done notification") {
            try recorder.calls().contains { $0.method == "Notify" && ($0.summary ?? "").contains("uploaded to home:/Photos") }
        }
        let done = try #require(try recorder.calls().first { $0.method == "Notify" && ($0.summary ?? "").contains("uploaded") })
        #expect(done.summary == "IMG_0042 (1).jpg uploaded to home:/Photos", "\(String(describing: done.summary))")
    }

    @Test("without a notification service the agent works and says so once in its log")
    func noService() throws {
        let bus = try PrivateSessionBus()
        let server = try ReferenceServer()
        try server.makeFolder("Photos")
        let session = try AgentHarness(extraEnvironment: bus.environment)
        try session.addAccount(server)
        let a = try session.home.file("a.txt", bytes: Array("a".utf8))
        try session.cli(["upload", "--to", "/Photos", a])
        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        #expect(session.agentLog.components(separatedBy: "no notification service").count - 1 == 1, "\(session.agentLog)")
    }
}
