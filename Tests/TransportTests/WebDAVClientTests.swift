import Foundation
import Testing
import TestSupport
import Transport

@Suite("WebDAV client against the reference server")
struct WebDAVClientTests {
    @Test("lists a folder's files and subfolders, with spaces and non-ASCII names, but not the folder itself")
    func listsFolder() throws {
        let dav = try WebDAVTestServer()
        let photo = TestData.bytes(count: 1000, seed: 1)
        let note = Array("ünïcødé\n".utf8)
        try dav.put("Photos/IMG 1.jpg", photo)
        try dav.put("Photos/Ünïcødé #1 100%.txt", note)
        try dav.put("Photos/Sub folder/deeper.bin", [1, 2, 3])
        try dav.server.makeFolder("Photos/日本 & Meer")

        let items = try dav.client.list("/Photos").sorted { $0.name < $1.name }
        #expect(items.map(\.name) == ["IMG 1.jpg", "Sub folder", "Ünïcødé #1 100%.txt", "日本 & Meer"])
        #expect(items.map(\.path) == ["/Photos/IMG 1.jpg", "/Photos/Sub folder", "/Photos/Ünïcødé #1 100%.txt", "/Photos/日本 & Meer"])
        #expect(items.map(\.isFolder) == [false, true, false, true])
        let jpg = items[0], txt = items[2]
        #expect(jpg.size == 1000)
        #expect(txt.size == Int64(note.count))
        #expect(jpg.etag?.hasPrefix("\"") == true)
        #expect(jpg.etag != txt.etag)
        #expect(jpg.lastModified.map { abs($0.timeIntervalSinceNow) < 600 } == true)
        #expect(jpg.sha256 == (try TestData.sha256(ofFile: dav.server.tree() + "/Photos/IMG 1.jpg")))
        #expect(items[1].size == nil && items[1].checksum == nil)

        // Without details: the same entries and kinds, and nothing the server had to compute.
        let kinds = try dav.client.list("/Photos", details: false).sorted { $0.name < $1.name }
        #expect(kinds.map(\.path) == items.map(\.path) && kinds.map(\.isFolder) == items.map(\.isFolder))
        #expect(kinds.allSatisfy { $0.size == nil && $0.etag == nil && $0.checksum == nil })

        let root = try dav.client.list("/")
        #expect(root.map(\.name) == ["Photos"])
        #expect(try dav.client.list("/Photos/Sub folder/").map(\.path) == ["/Photos/Sub folder/deeper.bin"])
        #expect(try dav.client.list("/Photos/日本 & Meer").isEmpty)
    }

    @Test("describes one file: size, ETag in header form, checksum, content type")
    func propertiesOfFile() throws {
        let dav = try WebDAVTestServer()
        let bytes = TestData.bytes(count: 4321, seed: 2)
        let onDisk = try dav.put("Docs/report #2.pdf", bytes)
        let item = try dav.client.properties(of: "/Docs/report #2.pdf")
        #expect(item.path == "/Docs/report #2.pdf")
        #expect(item.name == "report #2.pdf")
        #expect(!item.isFolder)
        #expect(item.size == 4321)
        #expect(item.contentType == "application/pdf")
        #expect(item.sha256 == (try TestData.sha256(ofFile: onDisk)))
        let etag = try #require(item.etag)
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))

        // Rewriting the file changes its ETag.
        try dav.put("Docs/report #2.pdf", TestData.bytes(count: 4321, seed: 3))
        #expect(try dav.client.properties(of: "/Docs/report #2.pdf").etag != etag)

        let folder = try dav.client.properties(of: "/Docs")
        #expect(folder.isFolder)
        #expect(try dav.client.properties(of: "/").isFolder)
    }

    @Test("a missing path is a 404 from properties and false from exists")
    func missing() throws {
        let dav = try WebDAVTestServer()
        try dav.put("here.txt", [1])
        try dav.server.makeFolder("Folder")
        #expect(try dav.client.exists("/here.txt"))
        #expect(try dav.client.exists("/Folder"))
        #expect(try !dav.client.exists("/not here.txt"))
        #expect(try !dav.client.exists("/Folder/nested/deeper"))
        let error = #expect(throws: HTTPStatusError.self) { try dav.client.properties(of: "/nope") }
        #expect(error?.status == 404)
        #expect(error?.step == .propfind)
    }

    @Test("listing a file instead of a folder says so")
    func listFile() throws {
        let dav = try WebDAVTestServer()
        try dav.put("a file.txt", [1, 2])
        let error = #expect(throws: WrongRemoteKind.self) { try dav.client.list("/a file.txt") }
        #expect(error == WrongRemoteKind(path: "/a file.txt", isFolder: false))
    }

    @Test("MKCOL creates a folder, accepts one that exists, and refuses where a file is")
    func makeFolder() throws {
        let dav = try WebDAVTestServer()
        try dav.client.makeFolder("/New folder ü")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: dav.server.tree() + "/New folder ü", isDirectory: &isDirectory) && isDirectory.boolValue)
        try dav.client.makeFolder("/New folder ü") // 405: already there, and a folder
        try dav.client.makeFolder("/")

        try dav.put("taken", [1])
        let kind = #expect(throws: WrongRemoteKind.self) { try dav.client.makeFolder("/taken") }
        #expect(kind?.path == "/taken")

        let conflict = #expect(throws: HTTPStatusError.self) { try dav.client.makeFolder("/no parent/child") }
        #expect(conflict?.status == 409)
        #expect(conflict?.step == .mkcol)
    }

    @Test("a folder another client creates at the same moment counts as made, whatever MKCOL answered")
    func makeFoldersRace() throws {
        let dav = try WebDAVTestServer()
        // The other client got there between our look and our MKCOL: the first PROPFIND
        // saw nothing, and this server answers MKCOL on a fresh folder with 423 or 500.
        try dav.server.makeFolder("Shared/Race")
        try dav.server.fault(["method": "PROPFIND", "status": 404, "count": 1])
        try dav.server.fault(["method": "MKCOL", "status": 423, "count": 1])
        try dav.server.fault(["method": "MKCOL", "status": 500, "count": 1])
        try dav.client.makeFolders("/Shared/Race")
        #expect((try dav.server.control("GET", "faults") as? [Any])?.isEmpty == true, "every fault was met")

        // With nothing there afterwards, what MKCOL answered stands.
        try dav.server.fault(["method": "MKCOL", "status": 403, "count": 1])
        let refused = #expect(throws: HTTPStatusError.self) { try dav.client.makeFolder("/Forbidden") }
        #expect(refused?.status == 403 && refused?.step == .mkcol)
    }

    @Test("makeFolders creates every missing parent, and is a no-op when all exist")
    func makeFolders() throws {
        let dav = try WebDAVTestServer()
        try dav.server.makeFolder("Photos")
        try dav.client.makeFolders("/Photos/2026/11 November/#1 ü")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: dav.server.tree() + "/Photos/2026/11 November/#1 ü", isDirectory: &isDirectory)
                && isDirectory.boolValue)
        try dav.client.makeFolders("/Photos/2026/11 November/#1 ü")
        try dav.client.makeFolders("/")

        try dav.put("Photos/file", [1])
        #expect(throws: WrongRemoteKind.self) { try dav.client.makeFolders("/Photos/file/below") }
        #expect(throws: WrongRemoteKind.self) { try dav.client.makeFolders("/Photos/file") }
    }

    @Test("a wrong password is a 401 for every call")
    func wrongPassword() throws {
        let dav = try WebDAVTestServer()
        try dav.server.makeFolder("Photos")
        let intruder = WebDAVClient(root: dav.server.webdavURL(), credentials: Credentials(username: "alice", password: "guess"))
        let list = #expect(throws: HTTPStatusError.self) { try intruder.list("/Photos") }
        #expect(list?.status == 401)
        #expect(list?.step == .propfind)
        let mkcol = #expect(throws: HTTPStatusError.self) { try intruder.makeFolder("/Photos/x") }
        #expect(mkcol?.status == 401)
        let anonymous = WebDAVClient(root: dav.server.webdavURL(), credentials: nil)
        #expect((#expect(throws: HTTPStatusError.self) { try anonymous.properties(of: "/") })?.status == 401)
        #expect(!FileManager.default.fileExists(atPath: dav.server.tree() + "/Photos/x"))
    }

    @Test("reports the account's quota when one is set")
    func quota() throws {
        let dav = try WebDAVTestServer()
        try dav.put("Photos/a.bin", TestData.bytes(count: 3000, seed: 4))
        try dav.server.setQuota(availableBytes: 5000)
        let quota = try #require(try dav.client.quota(of: "/"))
        #expect(quota.availableBytes == 5000)
        #expect(quota.usedBytes == 3000)
        #expect(try dav.client.quota(of: "/Photos") == quota)
        #expect(try dav.client.properties(of: "/Photos").quota == quota)

        try dav.put("Photos/b.bin", TestData.bytes(count: 1000, seed: 5))
        #expect(try dav.client.quota(of: "/")?.availableBytes == 4000)
    }

    @Test("a server error answer carries its status and the server's words")
    func serverError() throws {
        let dav = try WebDAVTestServer()
        try dav.server.fault(["method": "PROPFIND", "status": 503, "body": "down for maintenance",
                              "headers": ["Retry-After": "7"]])
        let error = #expect(throws: HTTPStatusError.self) { try dav.client.list("/") }
        #expect(error?.status == 503)
        #expect(error?.retryAfter == "7")
        #expect(error?.serverMessage == "down for maintenance")
        #expect(try dav.client.list("/").isEmpty) // the fault was for one request
    }

    @Test("a PROPFIND reply that is not XML is a protocol violation")
    func notXML() throws {
        let dav = try WebDAVTestServer()
        try dav.server.fault(["method": "PROPFIND", "status": 207, "body": "<html>proxy error</html>"])
        #expect(throws: ProtocolViolation.self) { try dav.client.list("/") }
    }

    @Test("a folder of 3,000 files is listed as its reply comes (a reply several times what is held of it): every name once; a listing stopped early leaves the rest unread and the client working")
    func longFolder() throws {
        let dav = try WebDAVTestServer()
        let count = 3_000
        try TestData.emptyFiles(count, in: dav.server.tree() + "/Camera", prefix: "IMG_", first: 100_000)
        var names = Set<String>()
        var seen = 0
        #expect(try dav.client.eachItem(in: "/Camera", details: false) { item in
            seen += 1
            names.insert(item.name)
            return true
        })
        #expect(seen == count && names.count == count && names.contains("IMG_102999.jpg"))

        seen = 0
        #expect(try !dav.client.eachItem(in: "/Camera", details: false) { _ in
            seen += 1
            return seen < 10
        })
        #expect(seen == 10)
        #expect(try dav.client.list("/").map(\.name) == ["Camera"])
    }

    @Test("a listing cut short, or a reply about one file longer than any such reply needs, is refused as the server's fault")
    func cutShort() throws {
        let dav = try WebDAVTestServer()
        try dav.server.fault(["method": "PROPFIND", "status": 207,
                              "body": #"<d:multistatus xmlns:d="DAV:"><d:response><d:href>/dav/alice/a</d:href></d:response>"#])
        let error = #expect(throws: ProtocolViolation.self) { try dav.client.list("/") }
        #expect(error?.description.contains("ends") == true, "\(String(describing: error))")

        let request = HTTPRequest(method: "PROPFIND", url: try dav.client.url(for: "/", isFolder: true), headers: [("Depth", "1")],
                                  sink: .memory(limit: 64))
        let tooLong = #expect(throws: TransportError.self) { try dav.client.session.perform(request) }
        #expect(tooLong?.kind == .malformedReply)
        #expect(tooLong?.message == "the server's reply is longer than 64 bytes, far more than such a reply needs")
    }
}
