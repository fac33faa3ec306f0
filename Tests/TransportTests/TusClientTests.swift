import Foundation
import Glibc
import TestSupport
import Testing
import Transport

@Suite("The tus client against the reference server")
struct TusClientTests {
    @Test("discovers version, extensions, size limit and checksum algorithms")
    func discover() throws {
        let server = try ReferenceServer()
        let info = try TusClient(endpoint: server.tusURL, credentials: Credentials(username: "alice", password: "wonderland")).discover()
        #expect(info.versions.contains("1.0.0"))
        #expect(info.supportsCreation && info.supportsTermination)
        #expect(info.maxSize != nil)
        #expect(info.checksumAlgorithm == .sha256)
    }

    @Test("creates, sends in chunks with Content-Length, and the server's copy matches")
    func chunks() throws {
        let server = try ReferenceServer()
        try server.makeFolder("Docs")
        let folder = TemporaryFolder()
        let path = try folder.randomFile("big.bin", size: 3_000_001)
        let client = TusClient(endpoint: server.tusURL, credentials: Credentials(username: "alice", password: "wonderland"))
        let created = try client.create(length: 3_000_001, metadata: [("filename", "big.bin"), ("path", "Docs/big.bin")])
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var offset: Int64 = 0
        let sha = RunningSHA256()
        while offset < 3_000_001 {
            let length = min(1_000_000, 3_000_001 - offset)
            offset = try client.patch(url: created.url, descriptor: fd, offset: offset, length: length, observer: sha).offset
        }
        #expect(try client.status(of: created.url).offset == 3_000_001)
        #expect(sha.hexDigest == (try TestData.sha256(ofFile: path)))
        #expect(try TestData.sha256(ofFile: server.tree() + "/Docs/big.bin") == sha.hexDigest)
    }

    @Test("a reset mid-chunk leaves the server holding part of it, and HEAD says how much")
    func resetMidChunk() throws {
        let server = try ReferenceServer()
        try server.makeFolder("Docs")
        let folder = TemporaryFolder()
        let path = try folder.randomFile("v.bin", size: 2_000_000)
        let client = TusClient(endpoint: server.tusURL, credentials: Credentials(username: "alice", password: "wonderland"))
        let created = try client.create(length: 2_000_000, metadata: [("filename", "v.bin"), ("path", "Docs/v.bin")])
        try server.fault(["method": "PATCH", "reset_after_bytes": 700_000, "count": 1])
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        #expect(throws: TransportError.self) {
            _ = try client.patch(url: created.url, descriptor: fd, offset: 0, length: 2_000_000, observer: nil)
        }
        let status = try client.status(of: created.url)
        #expect(status.offset == 700_000)
        _ = try client.patch(url: created.url, descriptor: fd, offset: status.offset, length: 2_000_000 - status.offset, observer: nil)
        #expect(try TestData.sha256(ofFile: server.tree() + "/Docs/v.bin") == (try TestData.sha256(ofFile: path)))
    }

    @Test("a wrong password is an HTTP 401, and nothing is stored")
    func wrongPassword() throws {
        let server = try ReferenceServer()
        let client = TusClient(endpoint: server.tusURL, credentials: Credentials(username: "alice", password: "nope"))
        #expect { _ = try client.create(length: 10, metadata: [("filename", "a"), ("path", "a")]) } throws: {
            ($0 as? HTTPStatusError)?.status == 401
        }
    }

    @Test("an upload address on another host is refused before credentials go there")
    func otherOrigin() throws {
        let client = TusClient(endpoint: "http://127.0.0.1:1/files/", credentials: nil)
        #expect(throws: ProtocolViolation.self) { _ = try client.resolve("http://example.invalid/files/abc") }
        #expect(try client.resolve("/files/abc") == "http://127.0.0.1:1/files/abc")
    }
}
