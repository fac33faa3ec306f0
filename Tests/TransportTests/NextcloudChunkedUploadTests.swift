import Foundation
import Glibc
import TestSupport
import Testing
import Transport

@Suite("Nextcloud chunked upload v2 against the reference server's Nextcloud face")
struct NextcloudChunkedUploadTests {
    static let alice = Credentials(username: "alice", password: "wonderland")

    struct Setup {
        let server: ReferenceServer
        let client: NextcloudChunkedUpload
        let local = TemporaryFolder("iu-chunks")
        init(chunkMin: Int? = 65_536) throws {
            server = try ReferenceServer(arguments: chunkMin.map { ["--chunk-min", String($0)] } ?? [], face: .nextcloud)
            let found = try ServerDiscovery(address: server.baseURL, credentials: NextcloudChunkedUploadTests.alice).discover()
            client = NextcloudChunkedUpload(uploadsURL: try #require(found.uploadsURL), webdavURL: found.webdavURL,
                                            credentials: NextcloudChunkedUploadTests.alice)
        }

        /// Sends `path` in chunks of `chunk` bytes, lists, assembles; returns the assembly.
        func send(_ path: String, to destination: String, chunk: Int64, transfer: String = NextcloudChunkedUpload.newTransferName())
            throws -> NextcloudChunkedUpload.Assembly {
            let fd = try UploadTestFiles.open(path)
            defer { close(fd) }
            let size = try #require(UploadTestFiles.size(path))
            try client.createFolder(transfer, destination: destination, totalLength: size)
            var offset: Int64 = 0, number = 1
            let sha = RunningSHA256()
            while offset < size {
                let length = min(chunk, size - offset)
                try client.putChunk(transfer, number: number, descriptor: fd, offset: offset, length: length,
                                    destination: destination, totalLength: size, observer: sha)
                offset += length; number += 1
            }
            #expect(try client.heldChunks(transfer).map(\.size).reduce(0, +) == size)
            return try client.assemble(transfer, destination: destination, totalLength: size, mtime: 1_500_000_000,
                                       sha256: sha.hexDigest)
        }
    }

    @Test("files with spaces, unicode and # arrive identical, with the local mtime and the SHA-256 stored")
    func names() throws {
        let s = try Setup()
        try s.server.makeFolder("Ünïcødé Fotos #1")
        let dav = WebDAVClient(root: try s.server.nextcloudAccount().webdavURL, credentials: Self.alice)
        for (i, name) in ["IMG 0001.jpg", "naïve #2 100%.mov", "日本.txt"].enumerated() {
            let local = try UploadTestFiles.make(s.local, "f\(i)", size: 200_000 + i, seed: UInt64(i))
            let destination = "/Ünïcødé Fotos #1/" + name
            let assembly = try s.send(local, to: destination, chunk: 70_000)
            #expect(assembly.status == 201 && assembly.mtimeAccepted && assembly.etag != nil)
            let onServer = s.server.tree() + destination
            #expect(try TestData.sha256(ofFile: onServer) == (try TestData.sha256(ofFile: local)))
            #expect(try UploadTestFiles.mtime(onServer) == 1_500_000_000)
            #expect(try dav.properties(of: destination).sha256 == (try TestData.sha256(ofFile: local)))
        }
        let stats = try s.server.stats()
        #expect(stats["chunk_puts"] as? Int == 9 && stats["moves"] as? Int == 3)
    }

    @Test("a file over 100 MiB in 10 MiB chunks, with Nextcloud's 5 MiB minimum")
    func large() throws {
        let s = try Setup(chunkMin: nil)
        let local = try UploadTestFiles.make(s.local, "big.bin", size: (100 << 20) + 12_345, seed: 7)
        let assembly = try s.send(local, to: "/big.bin", chunk: 10 << 20)
        #expect(assembly.status == 201)
        #expect(try TestData.sha256(ofFile: s.server.tree() + "/big.bin") == (try TestData.sha256(ofFile: local)))
        #expect(try s.server.stats()["chunk_puts"] as? Int == 11)
    }

    @Test("after a reset mid-chunk the server holds only the whole chunks; resending the rest completes")
    func resume() throws {
        let s = try Setup()
        let local = try UploadTestFiles.make(s.local, "r.bin", size: 300_000, seed: 3)
        let fd = try UploadTestFiles.open(local)
        defer { close(fd) }
        let t = "resume-1"
        try s.client.createFolder(t, destination: "/r.bin", totalLength: 300_000)
        try s.client.putChunk(t, number: 1, descriptor: fd, offset: 0, length: 100_000, destination: "/r.bin", totalLength: 300_000, observer: nil)
        try s.server.fault(["method": "PUT", "path_prefix": "/remote.php/dav/uploads/", "reset_after_bytes": 40_000])
        #expect(throws: TransportError.self) {
            try s.client.putChunk(t, number: 2, descriptor: fd, offset: 100_000, length: 100_000, destination: "/r.bin",
                                  totalLength: 300_000, observer: nil)
        }
        #expect(try s.client.heldChunks(t) == [.init(number: 1, size: 100_000)])
        for n in 2...3 {
            try s.client.putChunk(t, number: n, descriptor: fd, offset: Int64(n - 1) * 100_000, length: 100_000,
                                  destination: "/r.bin", totalLength: 300_000, observer: nil)
        }
        #expect(try s.client.heldChunks(t).map(\.number) == [1, 2, 3])
        _ = try s.client.assemble(t, destination: "/r.bin", totalLength: 300_000, mtime: nil, sha256: nil)
        #expect(try TestData.sha256(ofFile: s.server.tree() + "/r.bin") == (try TestData.sha256(ofFile: local)))
    }

    @Test("assembling into a folder that does not exist is a 409 and creates nothing; once it is made, the same chunks assemble")
    func missingFolder() throws {
        let s = try Setup()
        let local = try UploadTestFiles.make(s.local, "m.bin", size: 1000, seed: 4)
        let error = #expect(throws: HTTPStatusError.self) { _ = try s.send(local, to: "/New Folder/m.bin", chunk: 1000, transfer: "m") }
        #expect(error?.status == 409 && error?.step == .move)
        #expect(!FileManager.default.fileExists(atPath: s.server.tree() + "/New Folder"))
        try WebDAVClient(root: s.client.webdavURL, credentials: Self.alice).makeFolders("/New Folder")
        #expect(try s.client.assemble("m", destination: "/New Folder/m.bin", totalLength: 1000, mtime: nil, sha256: nil).status == 201)
        #expect(try TestData.sha256(ofFile: s.server.tree() + "/New Folder/m.bin") == (try TestData.sha256(ofFile: local)))
    }

    @Test("an expired or deleted upload folder is a 404 when asked, and delete is idempotent")
    func lost() throws {
        let s = try Setup()
        try s.client.createFolder("gone", destination: "/g.bin", totalLength: 10)
        let bytes = Array("0123456789".utf8)
        try bytes.withUnsafeBytes { try s.client.putChunk("gone", number: 1, bytes: $0, destination: "/g.bin", totalLength: 10, observer: nil) }
        try s.server.expireUploads()
        #expect { try s.client.heldChunks("gone") } throws: { ($0 as? HTTPStatusError)?.status == 404 }
        #expect { try s.client.assemble("gone", destination: "/g.bin", totalLength: 10, mtime: nil, sha256: nil) } throws: {
            ($0 as? HTTPStatusError)?.status == 404
        }
        try s.client.createFolder("cancel", destination: "/g.bin", totalLength: 10)
        #expect { try s.client.createFolder("cancel", destination: "/g.bin", totalLength: 10) } throws: { ($0 as? HTTPStatusError)?.status == 405 }
        try s.client.delete("cancel")
        #expect { try s.client.heldChunks("cancel") } throws: { ($0 as? HTTPStatusError)?.status == 404 }
        try s.client.delete("cancel")
    }

    @Test("chunk numbers outside 1...10000 and impossible folder names never reach the server")
    func limits() throws {
        let client = NextcloudChunkedUpload(uploadsURL: "http://127.0.0.1:1/u/", webdavURL: "http://127.0.0.1:1/f/", credentials: nil)
        let bytes: [UInt8] = [1]
        for n in [0, 10_001] {
            #expect(throws: ProtocolViolation.self) {
                try bytes.withUnsafeBytes { try client.putChunk("t", number: n, bytes: $0, destination: "/x", totalLength: 1, observer: nil) }
            }
        }
        #expect(throws: ProtocolViolation.self) { try client.folderURL("../x") }
        #expect(throws: ProtocolViolation.self) { try client.folderURL("..") }
        #expect(try client.folderURL("a b") == "http://127.0.0.1:1/u/a%20b/")
    }
}
