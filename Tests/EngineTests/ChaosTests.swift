import Foundation
import Glibc
import TestSupport
import Testing

@Suite("Crash safety")
struct ChaosTests {
    @Test("the agent SIGKILLed 20 times while 200 files upload: each completes on the server exactly once, byte-identical, nothing left in progress")
    func killedTwentyTimes() async throws {
        try await offThePool {
            let server = try ReferenceServer(arguments: ["--max-uploads-per-account", "6"])
            try server.makeFolder("Chaos")
            let s = try AgentHarness()
            try s.writeConfig("[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 4\n")
            try s.addAccount(server)
            // 1 KB to 256 MB: mostly small, some medium, one large.
            var rng = SystemRandomNumberGenerator()
            var sizes: [Int] = (0..<185).map { _ in Int.random(in: 1_000...2_000_000, using: &rng) }
            sizes += (0..<14).map { _ in Int.random(in: 4_000_000...32_000_000, using: &rng) }
            sizes.append(256 * 1_000_000)
            var files: [String: String] = [:]
            for (i, size) in sizes.enumerated() {
                let name = "c\(i).bin"
                files[name] = try s.home.randomFile("chaos/\(name)", size: size, seed: UInt64(1000 + i))
            }
            #expect(try s.cli(["upload", "--to", "/Chaos"] + files.values.sorted()).status == 0)

            for _ in 0..<20 {
                try s.startAgent()
                usleep(UInt32.random(in: 200_000...1_500_000, using: &rng))
                s.killAgent()
            }
            try s.startAgent()
            try s.waitForAll("completed", count: 200, timeout: 300)

            let items = try s.items()
            #expect(!items.contains { $0["state"] as? String == "in_progress" })
            // The server places every finished upload (it merges nothing away): each file
            // was completed there exactly once.
            let completions = (try server.stats()["completions"] as? [String: Any])?["alice"] as? [String: Int] ?? [:]
            let twice = completions.filter { $0.value != 1 }
            #expect(twice.isEmpty, "completed more than once: \(twice.sorted { $0.key < $1.key }.prefix(10))")
            #expect(completions.count == 200, "\(completions.count) paths completed")
            let stored = try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Chaos")
            #expect(stored.count == 200, "stored \(stored.count) files")
            #expect(!stored.contains { $0.contains(" (") }, "no numbered copies: \(stored.filter { $0.contains(" (") })")
            for item in items {
                let name = try #require(item["name"] as? String)
                let local = try #require(files[name])
                let expected = try TestData.sha256(ofFile: local)
                #expect(item["sha256"] as? String == expected, "\(name): recorded digest")
                #expect(try TestData.sha256(ofFile: server.tree() + "/Chaos/" + name) == expected, "\(name): server copy")
            }
        }
    }
}
