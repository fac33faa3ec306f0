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
            try s.startAgent()
            try s.waitForAll("completed", count: 1, timeout: 60)
            // The row's reason while it waited, as the agent logs it once that is committed (a
            // look at the row would have to fall inside the short wait before the next try).
            #expect(s.agentLog.contains("this server cannot resume an upload, so the file is sent again from the start; retrying in"),
                    "\(s.agentLog.suffix(2000))")
            #expect(try TestData.sha256(ofFile: server.tree() + "/Clips/clip.mov") == (try TestData.sha256(ofFile: file)))
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Clips") == ["clip.mov"])
            let puts = try server.stats()["puts"] as? [String: Int] ?? [:]
            #expect(puts.count == 1 && puts.values.first == 2, "twice to the same temporary name: \(puts)")
        }
    }

    @Test("twelve photos into one new folder: the folder is looked at and made once, not once per photo; each photo is its PUT and MOVE, with no look before or after")
    func batchIntoOneFolder() async throws {
        try await offThePool {
            let server = try ReferenceServer(face: .webdav)
            let s = try AgentHarness()
            try s.addAccount(address: server.address())
            let count = 12
            for i in 0..<count { try s.home.randomFile("Trip/IMG_\(i).jpg", size: 20_000, seed: UInt64(100 + i)) }
            #expect(try s.cli(["upload", "--to", "/Photos", s.home.path + "/Trip"]).status == 0)
            _ = try server.control("POST", "stats/reset")
            try s.startAgent()
            try s.waitForAll("completed", count: count, timeout: 60)
            for i in 0..<count {
                #expect(try TestData.sha256(ofFile: server.tree() + "/Photos/Trip/IMG_\(i).jpg")
                        == (try TestData.sha256(ofFile: s.home.path + "/Trip/IMG_\(i).jpg")))
            }
            let requests = try server.stats()["requests"] as? [String: Int] ?? [:]
            // The folder: asked about, then made with its parent, once for the batch.
            #expect(requests["MKCOL"] == 2, "\(requests)")
            #expect(requests["PUT"] == count, "\(requests)")
            // The folder's listing, at most twice (if the batch outlived its lifetime); no
            // look at each photo before or after (nothing here relies on it).
            #expect((requests["PROPFIND"] ?? 0) <= 2, "\(requests)")
            // This face is sent a temporary and a MOVE (it cannot refuse a PUT over a file):
            // two requests per photo; one on a server that takes a conditional PUT.
            #expect(requests["MOVE"] == count, "\(requests)")
            #expect(requests.values.reduce(0, +) <= 2 * count + 4, "\(requests)")
        }
    }

    @Test("a folder of 12,000 files on the server: a batch into it lists it once, read as the reply comes, finds the one name taken, and sends the rest with no look before")
    func batchIntoLongFolder() async throws {
        try await offThePool {
            let server = try ReferenceServer(face: .webdav)
            let s = try AgentHarness()
            try s.addAccount(address: server.address())
            let folder = server.tree() + "/Photos/Trip"
            // More than a listing read whole was ever kept for (10,000 names).
            try TestData.emptyFiles(12_000, in: folder, prefix: "DSC_", first: 10_000)
            let theirs = Array("someone else's IMG_3.jpg".utf8)
            try Data(theirs).write(to: URL(fileURLWithPath: folder + "/IMG_3.jpg"))
            let count = 6
            for i in 0..<count { try s.home.randomFile("Trip/IMG_\(i).jpg", size: 20_000, seed: UInt64(200 + i)) }
            #expect(try s.cli(["upload", "--to", "/Photos", s.home.path + "/Trip"]).status == 0)
            _ = try server.control("POST", "stats/reset")
            try s.startAgent()
            try s.waitForAll("completed", count: count, timeout: 120)
            for i in 0..<count {
                let name = i == 3 ? "IMG_3 (1).jpg" : "IMG_\(i).jpg"
                #expect(try TestData.sha256(ofFile: folder + "/" + name) == (try TestData.sha256(ofFile: s.home.path + "/Trip/IMG_\(i).jpg")))
            }
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/IMG_3.jpg"))) == theirs)
            let requests = try server.stats()["requests"] as? [String: Int] ?? [:]
            #expect(requests["PUT"] == count && requests["MOVE"] == count, "\(requests)")
            // The listing once (twice if the batch outlived it), then IMG_3.jpg and the name
            // chosen instead looked at: each other photo went with no look at all.
            #expect((requests["PROPFIND"] ?? 0) <= 4, "\(requests)")
            #expect(requests.values.reduce(0, +) <= 2 * count + 4, "\(requests)")
        }
    }

    @Test("a folder gone between its making and the PUT, answered with 404 as rclone does: the agent makes it again and the file arrives")
    func folderGoneAnswered404() async throws {
        try await offThePool {
            let server = try ReferenceServer(face: .webdav)
            let s = try AgentHarness()
            try s.addAccount(address: server.address())
            let file = try s.home.randomFile("note.txt", size: 300_000, seed: 4)
            // The upload stops once its folder is made and its name found free, so the folder
            // is taken away, and the 404 set, before its PUT whatever the machine's pace.
            s.pause(at: "upload-target-checked")
            #expect(try s.cli(["upload", "--to", "/Notes", file]).status == 0)
            try s.startAgent()
            try s.waitForAgentLog("transfer 1: paused at upload-target-checked")
            try FileManager.default.removeItem(atPath: server.tree() + "/Notes")
            // What rclone answers to a PUT into a missing folder, where the others say 409.
            try server.fault(["method": "PUT", "path_prefix": "/dav/", "status": 404, "body": "Not Found"])
            s.releasePause()
            try s.waitForAll("completed", count: 1, timeout: 60)
            #expect(try TestData.sha256(ofFile: server.tree() + "/Notes/note.txt") == (try TestData.sha256(ofFile: file)))
            #expect(s.agentLog.contains("made /Notes again"))
        }
    }
}
