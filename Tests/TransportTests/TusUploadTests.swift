import Foundation
import Glibc
import TestSupport
import Testing
import Transport

@Suite("tus behind the upload interface")
struct TusUploadTests {
    let alice = Credentials(username: "alice", password: "wonderland")

    @Test("start, ask, send a part, ask again, send the rest: the file is whole and finishing sends nothing more")
    func wholeLife() throws {
        let server = try ReferenceServer()
        try server.makeFolder("Docs")
        let folder = TemporaryFolder()
        let path = try folder.randomFile("a.bin", size: 1_500_000)
        let upload: UploadProtocol = TusUpload(endpoint: server.tusURL, credentials: alice)
        let capabilities = try upload.capabilities()
        #expect(capabilities.chunkChecksum == .sha256 && capabilities.finalStep == .lastChunk && capabilities.keepsPartialChunks)

        let target = UploadTarget(remotePath: "/Docs/a.bin", length: 1_500_000, contentType: "application/octet-stream")
        let started = try upload.start(target)
        #expect(started.expiresAt.map { $0 > Int64(Date().timeIntervalSince1970 * 1000) } == true, "an expiry in the future")
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        let first = try upload.send(.file(descriptor: fd, offset: 0, length: 600_000, observer: nil), to: started.handle, at: 0, of: target, checksum: nil)
        #expect(first.offset == 600_000 && first.expiresAt != nil)
        guard case .holds(let offset, let length, let expires) = try upload.status(of: started.handle, confirmed: 0) else {
            Issue.record("the server forgot a fresh upload")
            return
        }
        #expect(offset == 600_000 && length == 1_500_000 && expires != nil)
        let rest = try upload.send(.file(descriptor: fd, offset: offset, length: 900_000, observer: nil), to: started.handle,
                                   at: offset, of: target, checksum: nil)
        #expect(rest.offset == 1_500_000)
        try upload.finish(started.handle, as: target, sha256: try TestData.sha256(ofFile: path))
        #expect(try TestData.sha256(ofFile: server.tree() + "/Docs/a.bin") == (try TestData.sha256(ofFile: path)))
        #expect(try upload.status(of: started.handle, confirmed: 0) == .holds(offset: 1_500_000, length: 1_500_000, expiresAt: rest.expiresAt))
    }

    @Test("only asking says the server forgot an upload: 404 after abandon, 410 once it expired")
    func forgotten() throws {
        // Abandoned on a server that keeps uploads for an hour: only the abandon can explain
        // the 404, however slow the machine.
        let lasting = try ReferenceServer(arguments: ["--expire-seconds", "3600"])
        let kept = TusUpload(endpoint: lasting.tusURL, credentials: alice)
        let abandoned = try kept.start(UploadTarget(remotePath: "/x.bin", length: 10, contentType: "text/plain"))
        try kept.abandon(abandoned.handle)
        try kept.abandon(abandoned.handle) // already gone: fine
        #expect(try kept.status(of: abandoned.handle, confirmed: 0) == .forgotten(expired: false))

        let server = try ReferenceServer(arguments: ["--expire-seconds", "1"])
        let upload = TusUpload(endpoint: server.tusURL, credentials: alice)
        let y = UploadTarget(remotePath: "/y.bin", length: 10, contentType: "text/plain")
        let expiring = try upload.start(y)
        usleep(2_200_000)
        #expect(try upload.status(of: expiring.handle, confirmed: 0) == .forgotten(expired: true))
        // Sending to it is an error to classify, never a verdict about the upload.
        #expect(throws: HTTPStatusError.self) {
            _ = try upload.send(.bytes(Array("0123456789".utf8)), to: expiring.handle, at: 0, of: y, checksum: nil)
        }
    }
}
