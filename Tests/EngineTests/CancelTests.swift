import Foundation
import Glibc
import TestSupport
import Testing

@Suite("Cancel")
struct CancelTests {
    @Test("cancel of an in-flight 500 MB upload stops the traffic within a second and ends the upload on the server")
    func cancelBigUpload() async throws {
        try await offThePool {
            let server = try ReferenceServer()
            try server.makeFolder("Big")
            let s = try AgentHarness()
            try s.addAccount(server)
            let file = s.home.path + "/big.mov"
            // Sparse: 500 MB that cost no disk and no time to make.
            let fd = open(file, O_WRONLY | O_CREAT, 0o644)
            ftruncate(fd, 500_000_000)
            close(fd)
            // The server stops reading 1 MB into the first chunk, so the upload is surely in
            // flight, mid-request, when it is cancelled.
            try server.fault(["method": "PATCH", "stall_seconds": 30, "after_bytes": 1_000_000])
            try s.cli(["upload", "--to", "/Big", file])
            try s.startAgent()
            try s.waitFor("the upload under way") { ($0.first?["bytes_done"] as? Int ?? 0) > 500_000 }
            let id = try #require(try s.items().first?["id"] as? Int)

            let asked = Date()
            let r = try s.cli(["cancel", String(id)])
            let took = Date().timeIntervalSince(asked)
            #expect(r.status == 0 && r.stdout.contains("cancelled"), "\(r.stdout) \(r.stderr)")
            // Not a timing check (the figure belongs in a benchmark): the server holds the request
            // for 30 s, so a cancel that waited for it to end instead of stopping it takes that long.
            #expect(took < 20, "cancel took \(took) s: it waited for the stalled request instead of stopping it")
            let bytesThen = try server.stats()["patch_bytes"] as? Int ?? -1
            usleep(700_000)
            let bytesLater = try server.stats()["patch_bytes"] as? Int ?? -2
            #expect(bytesThen == bytesLater, "traffic went on after the cancel: \(bytesThen) -> \(bytesLater)")
            #expect(try s.items().isEmpty)
            let requests = (try server.stats()["requests"] as? [String: Any]) ?? [:]
            #expect(requests["DELETE"] as? Int ?? 0 >= 1, "the agent ended the upload on the server: \(requests)")
            let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: server.data.path + "/tus/alice")) ?? []).filter { !$0.hasPrefix(".") }
            #expect(leftovers.isEmpty, "the server keeps no partial upload: \(leftovers)")
            #expect(!FileManager.default.fileExists(atPath: server.tree() + "/Big/big.mov"))
        }
    }
}
