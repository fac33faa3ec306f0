import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing

@Suite("The network as one gate")
struct NetworkTests {
    @Test("taking the link down pauses three uploads as offline, nothing fails; bringing it up finishes them from their checkpoints")
    func linkDownAndUp() async throws {
        try await offThePool {
            let net = try TestNetwork()
            let server = try ReferenceServer(namespace: net.server, host: net.serverAddress)
            try server.makeFolder("Trip")
            let s = try AgentHarness()
            s.namespace = net.agent
            try s.writeConfig("[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 1\nstall_seconds = 30\n")
            try s.addAccount(server)
            try net.throttle("8mbit")
            var files: [String] = []
            for i in 0..<3 { files.append(try s.home.randomFile("trip/v\(i).mp4", size: 12_000_000, seed: UInt64(50 + i))) }
            #expect(try s.cli(["upload", "--to", "/Trip"] + files).status == 0)
            try s.startAgent()
            try s.waitFor("three uploads under way") { items in
                items.filter { $0["state"] as? String == "in_progress" && ($0["bytes_done"] as? Int ?? 0) > 2_500_000 }.count == 3
            }
            // Slowed to a crawl until the link is down, so they are still under way then
            // however long each look at the queue takes (a loaded machine, a sanitized build
            // whose every command starts slowly): the 28 MB left would take minutes.
            try net.throttle("1mbit")
            let before = try s.items()
            try net.linkDown()
            let down = Date()
            // Told by the kernel that the link is down, not by a transfer stalled for 30 s
            // (the bound leaves a loaded machine or a sanitized build room, and no more).
            try s.waitFor("all three waiting for the network", timeout: 10) { items in
                items.count == 3 && items.allSatisfy {
                    $0["state"] as? String == "queued" && ($0["reason"] as? [String: Any])?["code"] as? String == "offline"
                }
            }
            #expect(Date().timeIntervalSince(down) < 10, "seen through the kernel, well before the 30 s stall")
            let paused = try s.items()
            #expect(!paused.contains { $0["state"] as? String == "failed" })
            for item in paused {
                let earlier = try #require(before.first { $0["id"] as? Int == item["id"] as? Int })
                #expect(item["attempts"] as? Int == earlier["attempts"] as? Int, "no attempt counted")
            }
            let status = try s.cli(["status"])
            #expect(status.stdout.contains("waiting for network"), "\(status.stdout)")

            usleep(1_000_000)
            try net.throttle("100mbit")
            try net.linkUp()
            try s.waitForAll("completed", count: 3, timeout: 60)
            for item in try s.items() {
                let counters = try #require(item["counters"] as? [String: Any])
                #expect((counters["resumed_at"] as? Int ?? 0) > 0, "resumed from a checkpoint, not from zero: \(s.agentLog.suffix(3000))")
            }
            for (i, file) in files.enumerated() {
                #expect(try TestData.sha256(ofFile: server.tree() + "/Trip/v\(i).mp4") == (try TestData.sha256(ofFile: file)))
            }
            #expect(!(try s.cli(["status"]).stdout.contains("waiting for network")))
        }
    }

    @Test("a Wi-Fi-only rule holds auto-uploads on a wired link, with the reason shown, while a manual upload flows")
    func wifiOnly() async throws {
        try await offThePool {
            let net = try TestNetwork()
            let server = try ReferenceServer(namespace: net.server, host: net.serverAddress)
            try server.makeFolder("Camera")
            try server.makeFolder("Mine")
            let s = try AgentHarness()
            s.namespace = net.agent
            let sysfs = s.home.path + "/sys"
            let agentLink = try #require(try Shell.run("/usr/sbin/ip", ["-n", net.agent, "-o", "link", "show", "type", "veth"])
                .split(separator: ":").dropFirst().first?.trimmingCharacters(in: .whitespaces).split(separator: "@").first.map(String.init))
            try FileManager.default.createDirectory(atPath: sysfs + "/class/net/" + agentLink, withIntermediateDirectories: true)
            try s.writeConfig("[agent]\nautostart = false\n[network]\nsysfs_root = \(sysfs)\n")
            let r = try s.cli(["account", "add", "--webdav", server.webdavURL(), "--tus", server.tusURL, "--user", "alice",
                               "--name", "home", "--wifi-only", "--password-stdin", "--allow-insecure-http"], stdin: "wonderland\n")
            #expect(r.status == 0, "\(r.stderr)")
            // The watcher's work, queued as it would queue it.
            let store = try QueueStore(path: s.databasePath)
            let account = try #require(try store.account(named: "home"))
            #expect(account.wifiOnly)
            var auto: [NewTransfer] = []
            for i in 0..<3 {
                let path = LocalPath(try s.home.file("dcim/IMG_\(i).jpg", bytes: Array("photo \(i)".utf8)))
                let fp = try FileFingerprint.of(path)
                auto.append(NewTransfer(direction: .upload, origin: .auto, accountID: account.id, localPath: path,
                                        remotePath: "/Camera/IMG_\(i).jpg", bytesTotal: fp.size, fingerprint: fp))
            }
            try store.enqueue(auto)
            try s.startAgent()
            let mine = try s.home.file("mine.txt", bytes: Array("by hand".utf8))
            try s.cli(["upload", "--to", "/Mine", mine])
            try s.waitFor("the manual upload, with the auto-uploads held for Wi-Fi") { items in
                items.contains { $0["name"] as? String == "mine.txt" && $0["state"] as? String == "completed" }
                    && items.filter { ($0["reason"] as? [String: Any])?["code"] as? String == "wifi" }.count == 3
            }
            #expect(try s.cli(["queue"]).stdout.contains("waiting for Wi-Fi"))
            // `retry --now` sends one held item regardless.
            let held = try #require(try s.items().first { ($0["reason"] as? [String: Any])?["code"] as? String == "wifi" }?["id"] as? Int)
            #expect(try s.cli(["retry", "--now", String(held)]).status == 0)
            try s.waitFor("the one sent now") { items in items.contains { $0["id"] as? Int == held && $0["state"] as? String == "completed" } }
            #expect(try s.items().filter { ($0["reason"] as? [String: Any])?["code"] as? String == "wifi" }.count == 2)
            // The classifier now sees a wireless interface: the rows go.
            try FileManager.default.createDirectory(atPath: sysfs + "/class/net/" + agentLink + "/wireless", withIntermediateDirectories: true)
            try s.cli(["retry", "--all-failed"])
            try s.waitForAll("completed", count: 4, timeout: 30)
        }
    }
}
