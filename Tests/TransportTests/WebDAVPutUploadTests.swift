import Foundation
import Glibc
import TestSupport
import Testing
import Transport

@Suite("Whole-file PUT against the reference server, Apache mod_dav and rclone serve webdav")
struct WebDAVPutUploadTests {
    static let alice = Credentials(username: "alice", password: "wonderland")
    static let names = ["IMG 0001.jpg", "naïve #2 100%.mov", "日本 & Meer.txt"]

    /// Uploads three named files (one over 100 MiB when `large`) into `folder` and checks them on disk.
    static func uploadThree(_ dav: WebDAVClient, placement: PutPlacement, folder: String, disk: String, large: Bool,
                            expectMtime: Bool?) throws {
        let local = TemporaryFolder("iu-put")
        for (i, name) in names.enumerated() {
            let size = large && i == 1 ? (100 << 20) + 7 : 50_000 + i
            let path = try UploadTestFiles.make(local, "f\(i)", size: size, seed: UInt64(10 + i))
            let fd = try UploadTestFiles.open(path)
            defer { close(fd) }
            let result = try dav.upload(descriptor: fd, length: Int64(size), to: folder + "/" + name, placement: placement,
                                        token: "row-\(i)", mtime: 1_400_000_000)
            let onDisk = disk + "/" + name
            #expect(try TestData.sha256(ofFile: onDisk) == (try TestData.sha256(ofFile: path)), "\(name)")
            if let expectMtime {
                #expect(result.mtimeAccepted == expectMtime, "\(name)")
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
        let dav = WebDAVClient(root: server.webdavURL(), credentials: Self.alice)
        try Self.uploadThree(dav, placement: .viaTemporary, folder: "/New", disk: server.tree() + "/New", large: false, expectMtime: nil)
        let stats = try server.stats()
        let puts = try #require(stats["puts"] as? [String: Int])
        #expect(puts.keys.allSatisfy { $0.hasPrefix("New/.") && $0.hasSuffix(".part") } && puts.count == 3)
        #expect(stats["moves"] as? Int == 3)
    }

    @Test("an interrupted PUT leaves neither the file nor its temporary; the next try completes")
    func interrupted() throws {
        let server = try ReferenceServer(face: .webdav)
        let dav = WebDAVClient(root: server.webdavURL(), credentials: Self.alice)
        let local = TemporaryFolder("iu-put")
        let path = try UploadTestFiles.make(local, "v.bin", size: 2_000_000, seed: 5)
        let fd = try UploadTestFiles.open(path)
        defer { close(fd) }
        try server.fault(["method": "PUT", "path_prefix": "/dav/", "reset_after_bytes": 700_000])
        #expect(throws: TransportError.self) {
            _ = try dav.upload(descriptor: fd, length: 2_000_000, to: "/v.bin", placement: .viaTemporary, token: "7")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree()) == [])
        // A temporary left by a try that died with the agent is removed on request.
        _ = try dav.put(.bytes([1, 2, 3]), to: "/" + WebDAVClient.temporaryName(for: "v.bin", token: "7"))
        try dav.removeTemporary(for: "/v.bin", token: "7")
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree()) == [])
        _ = try dav.upload(descriptor: fd, length: 2_000_000, to: "/v.bin", placement: .viaTemporary, token: "7")
        #expect(try TestData.sha256(ofFile: server.tree() + "/v.bin") == (try TestData.sha256(ofFile: path)))
    }

    @Test("Nextcloud face: straight PUT with the mtime accepted and the checksum stored; duplicates overwrite")
    func nextcloudDirect() throws {
        let server = try ReferenceServer(face: .nextcloud)
        let account = try server.nextcloudAccount()
        let dav = WebDAVClient(root: account.webdavURL, credentials: Self.alice)
        try server.makeFolder("Camera")
        try Self.uploadThree(dav, placement: .direct, folder: "/Camera", disk: server.tree() + "/Camera", large: false, expectMtime: true)
        let local = TemporaryFolder("iu-put")
        let path = try UploadTestFiles.make(local, "again", size: 1234, seed: 99)
        let fd = try UploadTestFiles.open(path)
        defer { close(fd) }
        let sha = try TestData.sha256(ofFile: path)
        let again = try dav.upload(descriptor: fd, length: 1234, to: "/Camera/IMG 0001.jpg", placement: .direct, token: "x", sha256: sha)
        #expect(again.status == 204)
        #expect(try dav.properties(of: "/Camera/IMG 0001.jpg").sha256 == sha)
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/Camera").count == 3)
    }

    @Test("a folder that does not exist is a 409 (rclone: 404) from PUT, on every server, and nothing is created")
    func missingFolder() throws {
        let reference = try ReferenceServer(face: .webdav)
        let apache = try ForeignWebDAVServer(.apache)
        let rclone = try ForeignWebDAVServer(.rclone)
        // rclone (Go's WebDAV handler) says 404 where the others say 409 (RFC 4918 §9.7.1).
        let targets: [(WebDAVClient, String, Int)] = [
            (WebDAVClient(root: reference.webdavURL(), credentials: Self.alice), reference.tree(), 409),
            (WebDAVClient(root: apache.url, credentials: Credentials(username: apache.user, password: apache.password)), apache.root, 409),
            (WebDAVClient(root: rclone.url, credentials: Credentials(username: rclone.user, password: rclone.password)), rclone.root, 404),
        ]
        let local = TemporaryFolder("iu-put")
        let path = try UploadTestFiles.make(local, "x", size: 1000, seed: 1)
        let fd = try UploadTestFiles.open(path)
        defer { close(fd) }
        for (dav, disk, status) in targets {
            for placement in [PutPlacement.direct, .viaTemporary] {
                let error = #expect(throws: HTTPStatusError.self, "\(dav.root) \(placement)") {
                    _ = try dav.upload(descriptor: fd, length: 1000, to: "/No Such Folder/x.bin", placement: placement, token: "1")
                }
                #expect(error?.status == status && error?.step == .put, "\(dav.root) \(placement): \(String(describing: error))")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: disk) == [], "\(dav.root)")
        }
    }

    @Test("Apache httpd mod_dav: three files (one over 100 MiB) with strange names, through a temporary name")
    func apache() throws {
        let server = try ForeignWebDAVServer(.apache)
        let dav = WebDAVClient(root: server.url, credentials: Credentials(username: server.user, password: server.password))
        try dav.makeFolder("/Fotos #1")
        // Apache does not honour X-OC-Mtime.
        try Self.uploadThree(dav, placement: .viaTemporary, folder: "/Fotos #1", disk: server.root + "/Fotos #1", large: true,
                             expectMtime: false)
    }

    @Test("rclone serve webdav: three files (one over 100 MiB) with strange names, through a temporary name")
    func rclone() throws {
        let server = try ForeignWebDAVServer(.rclone)
        let dav = WebDAVClient(root: server.url, credentials: Credentials(username: server.user, password: server.password))
        try dav.makeFolder("/Fotos #1")
        // Debian 12's rclone (1.60) does not honour X-OC-Mtime either.
        try Self.uploadThree(dav, placement: .viaTemporary, folder: "/Fotos #1", disk: server.root + "/Fotos #1", large: true,
                             expectMtime: false)
    }
}
