import Foundation
import Glibc
import Queue
import TestSupport
import Testing

@Suite("Plain WebDAV servers: one PUT per file")
struct WebDAVPutTests {
    @Test("a PUT broken off is sent again from the start, the row saying so; no temporary and no half file stay behind")
    func interruptedPut() async throws {
        try await offThePool {
            let server = try ReferenceServer(face: .webdav)
            let s = try AgentHarness()
            try s.addAccount(address: server.address())
            let file = try s.home.randomFile("clip.mov", size: 6 << 20, seed: 3)
            try server.fault(["method": "PUT", "path_prefix": "/dav/", "reset_after_bytes": 2 << 20])
            #expect(try s.cli(["upload", "--to", "/Clips", file]).status == 0)
            let store = try QueueStore(path: s.databasePath)
            try s.startAgent()
            var messages: [String] = []
            let deadline = Date().addingTimeInterval(60)
            while try store.transfers().first?.state != .completed {
                guard Date() < deadline else { throw TestFailure("not completed: \(messages) \(s.agentLog.suffix(2000))") }
                if let message = try store.transfers().first?.reason?.message, messages.last != message { messages.append(message) }
                usleep(20_000)
            }
            #expect(messages.contains { $0.contains("this server cannot resume an upload, so the file is sent again from the start") }, "\(messages)")
            #expect(try TestData.sha256(ofFile: server.tree() + "/Clips/clip.mov") == (try TestData.sha256(ofFile: file)))
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Clips") == ["clip.mov"])
            let puts = try server.stats()["puts"] as? [String: Int] ?? [:]
            #expect(puts.count == 1 && puts.values.first == 2, "twice to the same temporary name: \(puts)")
        }
    }

    @Test("a folder gone when the PUT goes again, answered with 404 as rclone does: the agent makes it again and the file arrives")
    func folderGoneAnswered404() async throws {
        try await offThePool {
            let server = try ReferenceServer(face: .webdav)
            let s = try AgentHarness()
            try s.addAccount(address: server.address())
            let file = try s.home.randomFile("note.txt", size: 300_000, seed: 4)
            // The first PUT fails with a wait long enough to take the folder away and set the
            // 404 meanwhile, even when every step of this test is slow (a sanitized build).
            try server.fault(["method": "PUT", "path_prefix": "/dav/", "status": 500, "headers": ["Retry-After": "8"]])
            #expect(try s.cli(["upload", "--to", "/Notes", file]).status == 0)
            try s.startAgent()
            try s.waitFor("the first PUT refused") { $0.first?["state"] as? String == "retrying" }
            try FileManager.default.removeItem(atPath: server.tree() + "/Notes")
            // What rclone answers to a PUT into a missing folder, where the others say 409.
            try server.fault(["method": "PUT", "path_prefix": "/dav/", "status": 404, "body": "Not Found"])
            try s.waitForAll("completed", count: 1, timeout: 60)
            #expect(try TestData.sha256(ofFile: server.tree() + "/Notes/note.txt") == (try TestData.sha256(ofFile: file)))
            #expect(s.agentLog.contains("made /Notes again"))
        }
    }
}
