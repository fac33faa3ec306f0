import Foundation
import TestSupport
import Testing
import Transport

@Suite("Nextcloud chunked upload v2 through the agent")
struct NextcloudChunkedAgentTests {
    @Test("the chunks of one file go one at a time: the server never has two of its upload folder's chunks in flight")
    func oneChunkAtATime() async throws {
        try await offThePool {
            // 5 chunks, each held up for a second by the server: two sent at once would overlap.
            let scene = try NextcloudScene(size: (20 << 20) + 5)
            try scene.slowEveryChunk()
            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 120)
            try scene.expectArrivedOnce()
            let stats = try scene.server.stats()
            #expect(stats["chunk_puts"] as? Int == 5, "\(stats["chunk_puts"] ?? "-") chunk PUTs")
            let inFlight = stats["max_concurrent_chunk_puts"] as? [String: Int] ?? [:]
            #expect(inFlight.count == 1 && inFlight.values.allSatisfy { $0 == 1 }, "most chunk PUTs at once per upload folder: \(inFlight)")
        }
    }

    @Test("the file made carries its SHA-256 as OC-Checksum SHA256:<hex>; the same bytes sent again to the same name complete as already on the server, without a chunk")
    func sameBytesAgain() async throws {
        try await offThePool {
            // Over the 8 MiB up to which a file goes as one PUT (`NextcloudSmallFileTests`).
            let scene = try NextcloudScene(size: (8 << 20) + 777)
            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 120)
            try scene.expectArrivedOnce()
            let sha = try TestData.sha256(ofFile: scene.file)
            let account = try scene.server.nextcloudAccount()
            let dav = WebDAVClient(root: account.webdavURL, credentials: Credentials(username: "alice", password: "wonderland"))
            #expect(try dav.properties(of: "/" + scene.remote).checksum == "SHA256:" + sha, "oc:checksums as the MOVE stored it")

            // Another copy of the same bytes, under the same name, to the same folder.
            let again = scene.session.home.path + "/again/video #1.mov"
            try FileManager.default.createDirectory(atPath: scene.session.home.path + "/again", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: scene.file, toPath: again)
            try scene.server.control("POST", "stats/reset")
            #expect(try scene.session.cli(["upload", "--to", "/Big Uploads", again]).status == 0)
            try scene.session.waitForAll("completed", count: 2, timeout: 60)

            let stats = try scene.server.stats()
            let requests = stats["requests"] as? [String: Int] ?? [:]
            #expect(stats["chunk_puts"] as? Int == 0 && stats["chunk_bytes"] as? Int == 0, "no chunk sent: \(stats)")
            #expect(stats["moves"] as? Int == 0 && (stats["puts"] as? [String: Int] ?? [:]).isEmpty, "\(stats)")
            #expect(requests["MKCOL"] == nil && requests["PUT"] == nil && requests["MOVE"] == nil, "\(requests)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scene.server.tree() + "/Big Uploads") == ["video #1.mov"])
            #expect(scene.session.agentLog.contains("is already on the server with the same content"), "\(scene.session.agentLog.suffix(1500))")
        }
    }
}
