import Foundation
import Glibc
import TestSupport
import Testing
@testable import Transport

@Suite("Nextcloud chunked upload v2 and oCIS tus behind the upload interface")
struct NextcloudUploadTests {
    static let alice = Credentials(username: "alice", password: "wonderland")

    struct Scene {
        let server: ReferenceServer
        let upload: NextcloudUpload
        let local = TemporaryFolder("iu-nc")
        init(chunkMin: Int64 = 1000) throws {
            server = try ReferenceServer(arguments: ["--chunk-min", String(chunkMin)], face: .nextcloud)
            let account = try server.nextcloudAccount()
            upload = NextcloudUpload(uploadsURL: account.uploadsURL, webdavURL: account.webdavURL, credentials: NextcloudUploadTests.alice,
                                     minimumChunkSize: chunkMin)
        }

        func send(_ fd: Int32, _ handle: String, _ offset: Int64, _ length: Int64, _ target: UploadTarget) throws -> Int64 {
            try upload.send(.file(descriptor: fd, offset: offset, length: length, observer: nil), to: handle, at: offset,
                            of: target, checksum: nil).offset
        }

        func chunkStats() throws -> (puts: Int, moves: Int, assemblies: [String: Int]) {
            let stats = try server.stats()
            return (stats["chunk_puts"] as? Int ?? -1, stats["moves"] as? Int ?? -1, stats["assemblies"] as? [String: Int] ?? [:])
        }
    }

    @Test("numbered chunks, asked about between them, then MOVE .file: identical, with the local mtime and the SHA-256 stored")
    func wholeLife() throws {
        let s = try Scene()
        try s.server.makeFolder("Fotos #1")
        let path = try UploadTestFiles.make(s.local, "a", size: 5_500, seed: 3)
        let sha = try TestData.sha256(ofFile: path)
        let fd = try UploadTestFiles.open(path)
        defer { close(fd) }
        let capabilities = try s.upload.capabilities()
        #expect(capabilities.minChunkSize == 1000 && capabilities.maxChunkCount == 10_000)
        #expect(!capabilities.keepsPartialChunks && capabilities.finalStep == .finish && !capabilities.wholeFileOnly)
        #expect(try NextcloudUpload(uploadsURL: "http://h/", webdavURL: "http://h/", credentials: nil).capabilities().minChunkSize == 5 << 20)

        let target = UploadTarget(remotePath: "/Fotos #1/IMG 0001 é.jpg", length: 5_500, contentType: "image/jpeg", mtime: 1_450_000_000)
        let handle = try s.upload.start(target).handle
        #expect(try s.send(fd, handle, 0, 2000, target) == 2000)
        #expect(try s.send(fd, handle, 2000, 2000, target) == 4000)
        #expect(try s.upload.status(of: handle, confirmed: 4000) == .holds(offset: 4000, length: nil, expiresAt: nil))
        #expect(try s.send(fd, handle, 4000, 1500, target) == 5500)
        try s.upload.finish(handle, as: target, sha256: sha)
        #expect(s.upload.lastAssembly?.mtimeAccepted == true)
        let account = try s.server.nextcloudAccount()
        let listed = try WebDAVClient(root: account.webdavURL, credentials: NextcloudUploadTests.alice).properties(of: target.remotePath)
        #expect(s.upload.madeETag != nil && s.upload.madeETag == listed.etag, "the assembly's reply names the file's version")
        let onDisk = s.server.tree() + "/Fotos #1/IMG 0001 é.jpg"
        #expect(try TestData.sha256(ofFile: onDisk) == sha)
        #expect(try UploadTestFiles.mtime(onDisk) == 1_450_000_000)
        let dav = WebDAVClient(root: try s.server.nextcloudAccount().webdavURL, credentials: Self.alice)
        #expect(try dav.properties(of: target.remotePath).sha256 == sha)
        #expect(try s.upload.status(of: handle, confirmed: 5500) == .forgotten(expired: false), "the folder is gone after assembly")
        let stats = try s.chunkStats()
        #expect(stats.puts == 3 && stats.moves == 1 && stats.assemblies == ["Fotos #1/IMG 0001 é.jpg": 1])
    }

    @Test("after a break the chunks held from 1 without a gap are kept; a stale chunk after a gap is removed and the rest sent again")
    func resumesFromHeldChunks() throws {
        let s = try Scene()
        let path = try UploadTestFiles.make(s.local, "b", size: 4_000, seed: 4)
        let fd = try UploadTestFiles.open(path)
        defer { close(fd) }
        let target = UploadTarget(remotePath: "/b.bin", length: 4_000, contentType: "application/octet-stream")
        let handle = try s.upload.start(target).handle
        #expect(try s.send(fd, handle, 0, 1000, target) == 1000)
        // A chunk 3 the server holds but that does not follow: another run's, cut short since.
        let other = NextcloudChunkedUpload(uploadsURL: s.upload.client.uploadsURL, webdavURL: s.upload.client.webdavURL, credentials: Self.alice)
        try other.putChunk(handle, number: 3, descriptor: fd, offset: 3000, length: 1000, destination: "/b.bin", totalLength: 4000, observer: nil)
        // A fresh client (a restarted agent) asks and goes on from there.
        let account = try s.server.nextcloudAccount()
        let restarted = NextcloudUpload(uploadsURL: account.uploadsURL, webdavURL: account.webdavURL, credentials: Self.alice, minimumChunkSize: 1000)
        #expect(try restarted.status(of: handle, confirmed: 1000) == .holds(offset: 1000, length: nil, expiresAt: nil))
        #expect(try other.heldChunks(handle).map(\.number) == [1], "the stale chunk 3 was removed")
        #expect(try restarted.send(.file(descriptor: fd, offset: 1000, length: 3000, observer: nil), to: handle, at: 1000, of: target,
                                   checksum: nil).offset == 4000)
        try restarted.finish(handle, as: target, sha256: try TestData.sha256(ofFile: path))
        #expect(try TestData.sha256(ofFile: s.server.tree() + "/b.bin") == (try TestData.sha256(ofFile: path)))

        // A chunk under the minimum can only be the last: nothing after it counts.
        let held = [NextcloudChunkedUpload.HeldChunk(number: 1, size: 1000), .init(number: 2, size: 10), .init(number: 3, size: 1000)]
        #expect(NextcloudUpload.usablePrefix(held, minimum: 1000).map(\.number) == [1, 2])
        #expect(NextcloudUpload.usablePrefix([.init(number: 2, size: 1000)], minimum: 1000).isEmpty)
    }

    @Test("a server that lost chunks it had confirmed says what it holds, for the upload policy to go back to")
    func lostConfirmedChunks() throws {
        let s = try Scene()
        let target = UploadTarget(remotePath: "/c.bin", length: 3_000, contentType: "application/octet-stream")
        let handle = try s.upload.start(target).handle
        #expect(try s.upload.status(of: handle, confirmed: 1000) == .holds(offset: 0, length: nil, expiresAt: nil))
    }

    @Test("an expired upload folder is a forgotten upload; abandon removes the folder; an empty file is one PUT")
    func forgottenAndAbandoned() throws {
        let s = try Scene()
        let target = UploadTarget(remotePath: "/d.bin", length: 3_000, contentType: "application/octet-stream")
        let expiring = try s.upload.start(target).handle
        try s.server.expireUploads()
        #expect(try s.upload.status(of: expiring, confirmed: 0) == .forgotten(expired: false))
        #expect(throws: HTTPStatusError.self) { _ = try s.upload.send(.bytes(Array(repeating: 1, count: 1000)), to: expiring, at: 0, of: target, checksum: nil) }

        let abandoned = try s.upload.start(target).handle
        try s.upload.abandon(abandoned)
        try s.upload.abandon(abandoned) // already gone: fine
        #expect(try s.upload.status(of: abandoned, confirmed: 0) == .forgotten(expired: false))

        let empty = UploadTarget(remotePath: "/empty.txt", length: 0, contentType: "text/plain", mtime: 1_200_000_000)
        let handle = try s.upload.start(empty).handle
        try s.upload.finish(handle, as: empty, sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(UploadTestFiles.size(s.server.tree() + "/empty.txt") == 0)
        #expect(try UploadTestFiles.mtime(s.server.tree() + "/empty.txt") == 1_200_000_000)
        #expect(try s.upload.status(of: handle, confirmed: 0) == .forgotten(expired: false), "its upload folder is gone")
    }

    @Test("oCIS: a tus upload created by POST to the WebDAV folder it goes into, with its name and mtime; a refused DELETE is no error")
    func ocisTus() throws {
        let server = try ReferenceServer(arguments: ["--product", "ocis"], face: .nextcloud)
        try server.makeFolder("Pics 1")
        let account = try server.nextcloudAccount()
        let upload = TusUpload(creatingInFoldersOf: account.webdavURL, credentials: Self.alice, maxChunkSize: 10_000_000)
        let capabilities = try upload.capabilities()
        #expect(capabilities.chunkChecksum == .sha1, "the algorithms it advertises: md5 and sha1")
        #expect(capabilities.maxChunkSize == 10_000_000, "the max_chunk_size its capabilities named")
        let local = TemporaryFolder("iu-ocis")
        let path = try UploadTestFiles.make(local, "x", size: 300_000, seed: 8)
        let fd = try UploadTestFiles.open(path)
        defer { close(fd) }
        let target = UploadTarget(remotePath: "/Pics 1/new #1 ü.jpg", length: 300_000, contentType: "image/jpeg", mtime: 1_350_000_000)
        let handle = try upload.start(target).handle
        #expect(try upload.send(.file(descriptor: fd, offset: 0, length: 300_000, observer: nil), to: handle, at: 0, of: target,
                                checksum: nil).offset == 300_000)
        try upload.finish(handle, as: target, sha256: try TestData.sha256(ofFile: path))
        let onDisk = server.tree() + "/Pics 1/new #1 ü.jpg"
        #expect(try TestData.sha256(ofFile: onDisk) == (try TestData.sha256(ofFile: path)))
        #expect(try UploadTestFiles.mtime(onDisk) == 1_350_000_000)
        let other = try upload.start(UploadTarget(remotePath: "/Pics 1/other.jpg", length: 10, contentType: "image/jpeg"))
        try upload.abandon(other.handle)
    }
}
