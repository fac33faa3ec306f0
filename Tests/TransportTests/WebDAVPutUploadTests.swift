import Foundation
import Glibc
import TestSupport
import Testing
import Transport

@Suite("Whole-file PUT behind the upload interface, against the reference server, Apache mod_dav and rclone serve webdav")
struct WebDAVPutUploadTests {
    static let alice = Credentials(username: "alice", password: "wonderland")
    static let names = ["IMG 0001.jpg", "naïve #2 100%.mov", "日本 & Meer.txt"]

    /// Sends the file at `path` as `remotePath` the way the engine does: start, ask, send it
    /// whole, finish. Returns the handle and what the server said to the PUT.
    @discardableResult
    static func send(_ upload: WebDAVPutUpload, _ path: String, to remotePath: String, mtime: Int64? = nil) throws
        -> (handle: String, put: WebDAVClient.PutResult?) {
        let size = try #require(UploadTestFiles.size(path))
        let target = UploadTarget(remotePath: remotePath, length: size, contentType: "application/octet-stream", mtime: mtime)
        let fd = try UploadTestFiles.open(path)
        defer { close(fd) }
        let handle = try upload.start(target).handle
        #expect(try upload.status(of: handle, confirmed: 0) == .holds(offset: 0, length: nil, expiresAt: nil))
        // As the engine does: an empty file has no chunk, and `finish` makes it.
        if size > 0 {
            let confirmed = try upload.send(.file(descriptor: fd, offset: 0, length: size, observer: nil), to: handle, at: 0,
                                            of: target, checksum: nil)
            #expect(confirmed.offset == size)
        }
        try upload.finish(handle, as: target, sha256: try TestData.sha256(ofFile: path))
        return (handle, upload.lastPut)
    }

    /// Uploads three named files (one over 100 MiB when `large`) into `folder` and checks them on disk.
    static func uploadThree(_ upload: WebDAVPutUpload, folder: String, disk: String, large: Bool, expectMtime: Bool?) throws {
        let local = TemporaryFolder("iu-put")
        for (i, name) in names.enumerated() {
            let size = large && i == 1 ? (100 << 20) + 7 : 50_000 + i
            let path = try UploadTestFiles.make(local, "f\(i)", size: size, seed: UInt64(10 + i))
            let result = try send(upload, path, to: folder + "/" + name, mtime: 1_400_000_000)
            let onDisk = disk + "/" + name
            #expect(try TestData.sha256(ofFile: onDisk) == (try TestData.sha256(ofFile: path)), "\(name)")
            if let expectMtime {
                #expect(result.put?.mtimeAccepted == expectMtime, "\(name)")
                if expectMtime { #expect(try UploadTestFiles.mtime(onDisk) == 1_400_000_000, "\(name)") }
            }
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: disk).sorted()
        #expect(left == names.sorted(), "no temporary stays behind")
    }

    @Test("reference WebDAV face: through a temporary name, then MOVE; nothing half-written under the real name")
    func referenceViaTemporary() throws {
        let server = try ReferenceServer(face: .webdav)
        try server.makeFolder("New")
        let upload = WebDAVPutUpload(root: server.webdavURL(), credentials: Self.alice, placement: .viaTemporary)
        #expect(try upload.capabilities().wholeFileOnly)
        try Self.uploadThree(upload, folder: "/New", disk: server.tree() + "/New", large: false, expectMtime: nil)
        let stats = try server.stats()
        let puts = try #require(stats["puts"] as? [String: Int])
        #expect(puts.keys.allSatisfy { $0.hasPrefix("New/.") && $0.hasSuffix(".part") } && puts.count == 3)
        #expect(stats["moves"] as? Int == 3)
    }

    @Test("an interrupted PUT leaves neither the file nor its temporary; one left by a killed try goes before the next; cancel removes it")
    func interrupted() throws {
        let server = try ReferenceServer(face: .webdav)
        let upload = WebDAVPutUpload(root: server.webdavURL(), credentials: Self.alice, placement: .viaTemporary)
        let local = TemporaryFolder("iu-put")
        let path = try UploadTestFiles.make(local, "v.bin", size: 2_000_000, seed: 5)
        let fd = try UploadTestFiles.open(path)
        defer { close(fd) }
        let target = UploadTarget(remotePath: "/v.bin", length: 2_000_000, contentType: "application/octet-stream")
        let handle = try upload.start(target).handle
        #expect(handle.hasPrefix("/.v.bin.") && handle.hasSuffix(".part"))
        try server.fault(["method": "PUT", "path_prefix": "/dav/", "reset_after_bytes": 700_000])
        #expect(throws: TransportError.self) {
            _ = try upload.send(.file(descriptor: fd, offset: 0, length: 2_000_000, observer: nil), to: handle, at: 0, of: target, checksum: nil)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree()) == [])
        // A temporary left by a try that died with the agent is removed before the next one.
        _ = try upload.dav.put(.bytes([1, 2, 3]), to: handle)
        #expect(try upload.status(of: handle, confirmed: 0) == .holds(offset: 0, length: nil, expiresAt: nil))
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree()) == [])
        // A PUT the server confirmed whole is kept for the MOVE; a temporary with another size is not.
        _ = try upload.send(.file(descriptor: fd, offset: 0, length: 2_000_000, observer: nil), to: handle, at: 0, of: target, checksum: nil)
        #expect(try upload.status(of: handle, confirmed: 2_000_000) == .holds(offset: 2_000_000, length: nil, expiresAt: nil))
        #expect(try upload.status(of: handle, confirmed: 1_999_999) == .forgotten(expired: false))
        try upload.abandon(handle)
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree()) == [])
        try Self.send(upload, path, to: "/v.bin")
        #expect(try TestData.sha256(ofFile: server.tree() + "/v.bin") == (try TestData.sha256(ofFile: path)))
    }

    @Test("Nextcloud face: straight PUT with the mtime accepted; never over a file already there (If-None-Match: *); an empty file is one empty PUT")
    func nextcloudDirect() throws {
        let server = try ReferenceServer(face: .nextcloud)
        let account = try server.nextcloudAccount()
        let upload = WebDAVPutUpload(root: account.webdavURL, credentials: Self.alice, placement: .direct)
        try server.makeFolder("Camera")
        try Self.uploadThree(upload, folder: "/Camera", disk: server.tree() + "/Camera", large: false, expectMtime: true)
        let local = TemporaryFolder("iu-put")
        let before = try TestData.sha256(ofFile: server.tree() + "/Camera/IMG 0001.jpg")
        let taken = #expect(throws: NameTaken.self) {
            try Self.send(upload, try UploadTestFiles.make(local, "again", size: 1234, seed: 99), to: "/Camera/IMG 0001.jpg")
        }
        #expect(taken?.path == "/Camera/IMG 0001.jpg")
        #expect(try TestData.sha256(ofFile: server.tree() + "/Camera/IMG 0001.jpg") == before, "the file there is untouched")
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Camera").count == 3)
        try Self.send(upload, try UploadTestFiles.make(local, "empty", size: 0, seed: 1), to: "/Camera/empty.txt", mtime: 1_300_000_000)
        #expect(UploadTestFiles.size(server.tree() + "/Camera/empty.txt") == 0)
        #expect(try UploadTestFiles.mtime(server.tree() + "/Camera/empty.txt") == 1_300_000_000)
    }

    @Test("Nextcloud face, a PUT streamed from the file under the checksum Nextcloud keeps unchecked: broken off before its end when the file changed since its checksum was made, so nothing is kept; whole when it matches")
    func sealedByItsChecksum() throws {
        let server = try ReferenceServer(face: .nextcloud)
        let account = try server.nextcloudAccount()
        let upload = WebDAVPutUpload(root: account.webdavURL, credentials: Self.alice, placement: .direct, storesChecksum: true)
        try server.makeFolder("Camera")
        let size = 3_000_000
        let local = TemporaryFolder("iu-put")
        let path = try UploadTestFiles.make(local, "IMG.jpg", size: size, seed: 7)
        let fd = try UploadTestFiles.open(path)
        defer { close(fd) }
        let target = UploadTarget(remotePath: "/Camera/IMG.jpg", length: Int64(size), contentType: "image/jpeg")
        func checksum(_ hex: String) -> (ChecksumAlgorithm, String) {
            let bytes = stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
            return (.sha256, Data(bytes).base64EncodedString())
        }
        func put(_ hex: String) throws {
            _ = try upload.send(.file(descriptor: fd, offset: 0, length: Int64(size), observer: nil), to: target.remotePath, at: 0,
                                of: target, checksum: checksum(hex))
        }
        // Hashed, then touched early in the file (a tag editor, say) before it is sent: the
        // changed byte goes out first, and only the end of the body can tell.
        let hashed = try TestData.sha256(ofFile: path)
        let edit = open(path, O_WRONLY | O_CLOEXEC)
        #expect(edit >= 0 && pwrite(edit, [0x5A, 0xA5], 2, 1_000) == 2)
        close(edit)
        let broken = #expect(throws: TransportError.self) { try put(hashed) }
        #expect(broken?.kind == .sourceRead && broken?.errno == ENODATA, "\(String(describing: broken))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Camera") == [], "nothing kept of the broken PUT")

        let now = try TestData.sha256(ofFile: path)
        try put(now)
        #expect(try TestData.sha256(ofFile: server.tree() + "/Camera/IMG.jpg") == now)
        #expect(try upload.dav.properties(of: "/Camera/IMG.jpg").checksum == "SHA256:" + now)
    }

    @Test("a temporary finished over a file already there: NameTaken on every server (MOVE with Overwrite: F), the file there untouched, the temporary kept to finish under another name")
    func finishNeverReplaces() throws {
        let reference = try ReferenceServer(face: .webdav)
        let apache = try ForeignWebDAVServer(.apache)
        let rclone = try ForeignWebDAVServer(.rclone)
        let targets: [(String, Credentials, String)] = [
            (reference.webdavURL(), Self.alice, reference.tree()),
            (apache.url, Credentials(username: apache.user, password: apache.password), apache.root),
            (rclone.url, Credentials(username: rclone.user, password: rclone.password), rclone.root),
        ]
        let local = TemporaryFolder("iu-put")
        let ours = try UploadTestFiles.make(local, "ours", size: 40_000, seed: 5)
        let theirs = try UploadTestFiles.make(local, "theirs", size: 40_000, seed: 6)
        for (root, credentials, disk) in targets {
            let upload = WebDAVPutUpload(root: root, credentials: credentials, placement: .viaTemporary)
            _ = try Self.send(upload, theirs, to: "/taken.bin")
            let target = UploadTarget(remotePath: "/taken.bin", length: 40_000, contentType: "application/octet-stream")
            let fd = try UploadTestFiles.open(ours)
            defer { close(fd) }
            let handle = try upload.start(target).handle
            _ = try upload.send(.file(descriptor: fd, offset: 0, length: 40_000, observer: nil), to: handle, at: 0, of: target, checksum: nil)
            let taken = #expect(throws: NameTaken.self, "\(root)") { try upload.finish(handle, as: target, sha256: "") }
            #expect(taken?.path == "/taken.bin", "\(root)")
            #expect(try TestData.sha256(ofFile: disk + "/taken.bin") == (try TestData.sha256(ofFile: theirs)), "\(root): theirs untouched")
            var other = target
            other.remotePath = "/taken (1).bin"
            try upload.finish(handle, as: other, sha256: "")
            #expect(try TestData.sha256(ofFile: disk + "/taken (1).bin") == (try TestData.sha256(ofFile: ours)), "\(root)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: disk).sorted() == ["taken (1).bin", "taken.bin"], "\(root)")
        }
    }

    @Test("a folder that does not exist is a 409 (rclone: 404) from PUT, on every server, and nothing is created")
    func missingFolder() throws {
        let reference = try ReferenceServer(face: .webdav)
        let apache = try ForeignWebDAVServer(.apache)
        let rclone = try ForeignWebDAVServer(.rclone)
        // rclone (Go's WebDAV handler) says 404 where the others say 409 (RFC 4918 §9.7.1).
        let targets: [(String, Credentials, String, Int)] = [
            (reference.webdavURL(), Self.alice, reference.tree(), 409),
            (apache.url, Credentials(username: apache.user, password: apache.password), apache.root, 409),
            (rclone.url, Credentials(username: rclone.user, password: rclone.password), rclone.root, 404),
        ]
        let local = TemporaryFolder("iu-put")
        let path = try UploadTestFiles.make(local, "x", size: 1000, seed: 1)
        for (root, credentials, disk, status) in targets {
            for placement in [PutPlacement.direct, .viaTemporary] {
                let upload = WebDAVPutUpload(root: root, credentials: credentials, placement: placement)
                let error = #expect(throws: HTTPStatusError.self, "\(root) \(placement)") {
                    try Self.send(upload, path, to: "/No Such Folder/x.bin")
                }
                #expect(error?.status == status && error?.step == .put, "\(root) \(placement): \(String(describing: error))")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: disk) == [], "\(root)")
        }
    }

    @Test("Apache httpd mod_dav: three files (one over 100 MiB) with strange names, through a temporary name")
    func apache() throws {
        let server = try ForeignWebDAVServer(.apache)
        let upload = WebDAVPutUpload(root: server.url, credentials: Credentials(username: server.user, password: server.password),
                                     placement: .viaTemporary)
        try upload.dav.makeFolder("/Fotos #1")
        // Apache does not honour X-OC-Mtime.
        try Self.uploadThree(upload, folder: "/Fotos #1", disk: server.root + "/Fotos #1", large: true, expectMtime: false)
    }

    @Test("rclone serve webdav: three files (one over 100 MiB) with strange names, through a temporary name")
    func rclone() throws {
        let server = try ForeignWebDAVServer(.rclone)
        let upload = WebDAVPutUpload(root: server.url, credentials: Credentials(username: server.user, password: server.password),
                                     placement: .viaTemporary)
        try upload.dav.makeFolder("/Fotos #1")
        // Debian 12's rclone (1.60) does not honour X-OC-Mtime either.
        try Self.uploadThree(upload, folder: "/Fotos #1", disk: server.root + "/Fotos #1", large: true, expectMtime: false)
    }
}
