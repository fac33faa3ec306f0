import Foundation
import TestSupport
import Testing
@testable import Transport

@Suite("Server discovery from one address")
struct ServerDiscoveryTests {
    static let alice = Credentials(username: "alice", password: "wonderland")

    @Test("a Nextcloud under a path prefix: chunked upload, the user id (not the login) in the WebDAV path")
    func nextcloud() throws {
        let server = try ReferenceServer(arguments: ["--path-prefix", "/nextcloud"], face: .nextcloud)
        let account = try server.nextcloudAccount()
        for typed in [server.baseURL + "/nextcloud", server.baseURL + "/nextcloud/", account.webdavURL + "Photos/?x=1"] {
            let found = try ServerDiscovery(address: typed, credentials: Self.alice).discover()
            #expect(found.kind == .nextcloud)
            #expect(found.product == "Nextcloud" && found.version == "28.0.4")
            #expect(found.baseURL == server.baseURL + "/nextcloud")
            #expect(found.userID == account.id && found.userID != "alice")
            #expect(found.webdavURL == account.webdavURL && found.webdavURL.contains("%20"))
            #expect(found.uploadsURL == account.uploadsURL)
            #expect(found.uploadProtocol == .nextcloudChunking && found.uploadProtocol.rawValue == "nextcloud-chunking")
            #expect(found.tusURL == nil && found.putPlacement == .direct)
            #expect(found.capabilities?.chunking == "1.0")
        }
        let status = try #require(try ServerDiscovery(address: server.baseURL + "/nextcloud", credentials: nil).status())
        #expect(status == ServerStatus(kind: .nextcloud, product: "Nextcloud", version: "28.0.4", maintenance: false))
    }

    @Test("ownCloud 10 is a plain PUT server; ownCloud Infinite Scale offers tus at its WebDAV folder, and it works")
    func owncloud() throws {
        let oc10 = try ReferenceServer(arguments: ["--product", "owncloud"], face: .nextcloud)
        let found10 = try ServerDiscovery(address: oc10.baseURL, credentials: Self.alice).discover()
        #expect(found10.kind == .owncloud && found10.product == "ownCloud" && found10.version == "10.13.4")
        #expect(found10.uploadProtocol == .webdavPut && found10.uploadsURL == nil)

        let ocis = try ReferenceServer(arguments: ["--product", "ocis"], face: .nextcloud)
        let found = try ServerDiscovery(address: ocis.baseURL, credentials: Self.alice).discover()
        #expect(found.kind == .owncloud && found.product == "Infinite Scale")
        #expect(found.uploadProtocol == .tus && found.tusURL == found.webdavURL)
        #expect(found.capabilities?.tus?.maxChunkSize == 10_000_000)
        #expect(found.capabilities?.checksumTypes == ["sha1", "md5"])

        // The tus client takes it from there: OPTIONS, then creation by POST to the folder.
        try ocis.makeFolder("Pics")
        let tus = TusClient(endpoint: found.webdavURL + "Pics/", credentials: Self.alice)
        let info = try tus.discover()
        #expect(info.supportsCreation && !info.supportsTermination && info.checksumAlgorithm == .sha1)
        let created = try tus.create(length: 5, metadata: [("filename", "new #1.txt")])
        let bytes: [UInt8] = Array("hello".utf8)
        _ = try bytes.withUnsafeBytes { try tus.patch(url: created.url, offset: 0, bytes: $0, observer: nil) }
        #expect(FileManager.default.contents(atPath: ocis.tree() + "/Pics/new #1.txt") == Data(bytes))
    }

    @Test("a plain WebDAV folder that answers PROPFIND is uploaded to by PUT through a temporary name")
    func plainWebDAV() throws {
        let server = try ReferenceServer(face: .webdav)
        let found = try ServerDiscovery(address: server.webdavURL(), credentials: Self.alice).discover()
        #expect(found.kind == .webdav && found.product == nil && found.userID == nil)
        #expect(found.webdavURL == server.webdavURL() && found.baseURL + "/" == server.webdavURL())
        #expect(found.uploadProtocol == .webdavPut && found.putPlacement == .viaTemporary)
    }

    @Test("a WebDAV folder with tus at /files/ on the same host (a tusd + WebDAV deployment) is uploaded to by tus")
    func tusBesideWebDAV() throws {
        let server = try ReferenceServer(face: .tus)
        let found = try ServerDiscovery(address: server.webdavURL(), credentials: Self.alice).discover()
        #expect(found.kind == .webdav && found.product == nil)
        #expect(found.webdavURL == server.webdavURL())
        #expect(found.uploadProtocol == .tus && found.tusURL == server.tusURL)
    }

    @Test("an address with tus but no WebDAV folder says what was tried and what was found")
    func tusWithoutWebDAV() throws {
        let server = try ReferenceServer(face: .tus)
        let error = #expect(throws: DiscoveryError.self) {
            try ServerDiscovery(address: server.baseURL, credentials: Self.alice).discover()
        }
        #expect(error?.code == .notRecognised)
        #expect(error?.tried == ["GET status.php: HTTP 404", "PROPFIND: HTTP 404", "OPTIONS /files/: tus 1.0.0"])
        #expect(error?.description.contains("has a tus server at \(server.tusURL), but no WebDAV folder at the address") == true)
    }

    @Test("an address that is neither says what was tried and what was found")
    func neither() throws {
        let apache = try ForeignWebDAVServer(.apache)
        let error = #expect(throws: DiscoveryError.self) {
            try ServerDiscovery(address: apache.url + "nothing/", credentials: Credentials(username: apache.user, password: apache.password)).discover()
        }
        #expect(error?.code == .notRecognised)
        #expect(error?.tried.first == "GET status.php: HTTP 404")
        #expect(error?.tried.dropFirst().first == "PROPFIND: HTTP 404")
        #expect(error?.tried.last?.hasPrefix("OPTIONS /files/: HTTP") == true && error?.tried.last?.hasSuffix(", no tus") == true)
        #expect(error?.description.contains("neither a Nextcloud or ownCloud server nor a WebDAV folder") == true)
        #expect(throws: ProtocolViolation.self) { try ServerDiscovery(address: "ftp://example.org", credentials: nil) }
    }

    @Test("a wrong password is a 401 at the user id, for Nextcloud and for plain WebDAV")
    func wrongPassword() throws {
        let nextcloud = try ReferenceServer(face: .nextcloud)
        let wrong = Credentials(username: "alice", password: "nope")
        #expect { try ServerDiscovery(address: nextcloud.baseURL, credentials: wrong).discover() } throws: {
            ($0 as? HTTPStatusError)?.status == 401
        }
        let plain = try ReferenceServer(face: .webdav)
        #expect { try ServerDiscovery(address: plain.webdavURL(), credentials: wrong).discover() } throws: {
            ($0 as? HTTPStatusError)?.status == 401
        }
    }

    @Test("maintenance mode is seen in status.php and stops discovery with its own reason, until it ends")
    func maintenance() throws {
        let server = try ReferenceServer(face: .nextcloud)
        try server.setMaintenance(true)
        let discovery = try ServerDiscovery(address: server.baseURL, credentials: Self.alice)
        #expect(try discovery.status()?.maintenance == true)
        let error = #expect(throws: DiscoveryError.self) { try discovery.discover() }
        #expect(error?.code == .maintenance && error?.status?.product == "Nextcloud")
        try server.setMaintenance(false)
        #expect(try discovery.status()?.maintenance == false)
        #expect(try discovery.discover().uploadProtocol == .nextcloudChunking)
    }

    @Test("Apache mod_dav and rclone serve webdav are plain WebDAV roots")
    func foreignServers() throws {
        for kind in [ForeignWebDAVServer.Kind.apache, .rclone] {
            let server = try ForeignWebDAVServer(kind)
            let found = try ServerDiscovery(address: server.url, credentials: Credentials(username: server.user, password: server.password)).discover()
            #expect(found.kind == .webdav, "\(kind)")
            #expect(found.uploadProtocol == .webdavPut && found.putPlacement == .viaTemporary, "\(kind)")
        }
    }
}

@Suite("What servers say about themselves, read strictly")
struct ServerReplyParsingTests {
    @Test("status.php: Nextcloud's booleans, ownCloud's strings, and nonsense refused")
    func status() throws {
        let nc = try #require(try ServerStatus.parse(json: #"{"installed":true,"maintenance":true,"versionstring":"29.0.1","productname":"Nextcloud"}"#))
        #expect(nc.kind == .nextcloud && nc.maintenance && nc.version == "29.0.1")
        let oc = try #require(try ServerStatus.parse(json: #"{"installed":"true","maintenance":"false","version":"10.13.4.2","productname":"ownCloud"}"#))
        #expect(oc.kind == .owncloud && !oc.maintenance && oc.version == "10.13.4.2")
        let ocis = try #require(try ServerStatus.parse(json: #"{"installed":true,"versionstring":"10.11.0","productname":"Infinite Scale","productversion":"5.0.5"}"#))
        #expect(ocis.kind == .owncloud && ocis.version == "5.0.5", "its own version, not the ownCloud 10 it answers like")
        let rc = try #require(try ServerStatus.parse(json: #"{"installed":true,"versionstring":"10.11.0","productname":"Infinite Scale","productversion":"7.0.0-rc.1"}"#))
        #expect(rc.version == "10.11.0", "a product version that is no plain version number falls back to versionstring")
        #expect(try ServerStatus.parse(json: #"{"hello":"world"}"#) == nil)
        #expect(try ServerStatus.parse(json: "<html>not found</html>") == nil)
        #expect(try ServerStatus.parse(json: #"{"installed":true,"productname":"Seafile"}"#) == nil)
        #expect(throws: ProtocolViolation.self) { try ServerStatus.parse(json: #"{"installed":true,"productname":"Nextcloud","maintenance":"maybe"}"#) }
        #expect(throws: ProtocolViolation.self) { try ServerStatus.parse(json: #"{"installed":true,"productname":"Nextcloud","versionstring":"28\u001b[2J"}"#) }
        #expect(throws: ProtocolViolation.self) { try ServerStatus.parse(json: #"{"installed":true,"productname":"Nextcloud","maintenance":7}"#) }
    }

    @Test("capabilities: tus support and chunking read; numbers that are not whole numbers refused")
    func capabilities() throws {
        let caps = try ServerCapabilities.parse(json: #"{"ocs":{"data":{"capabilities":{"files":{"tus_support":{"version":"1.0.0","resumable":"1.0.0","extension":"creation,creation-with-upload","max_chunk_size":10000000}},"checksums":{"supportedTypes":["SHA1","MD5"]}}}}}"#)
        #expect(caps.offersTus && !caps.offersChunking && caps.tus?.maxChunkSize == 10_000_000 && caps.checksumTypes == ["sha1", "md5"])
        #expect(try ServerCapabilities.parse(json: #"{"ocs":{"data":{"capabilities":{"dav":{"chunking":"1.0"}}}}}"#).offersChunking)
        #expect(try !ServerCapabilities.parse(json: #"{"ocs":{"data":{"capabilities":{"dav":{"chunking":"0.9"}}}}}"#).offersChunking)
        #expect(try !ServerCapabilities.parse(json: #"{"ocs":{"data":{"capabilities":{"files":{"tus_support":{"resumable":"2.0.0"}}}}}}"#).offersTus)
        for hostile in ["1e300", "-5", "1.5", "\"99999999999999999999\""] {
            #expect(throws: ProtocolViolation.self, "\(hostile)") {
                try ServerCapabilities.parse(json: #"{"ocs":{"data":{"capabilities":{"files":{"tus_support":{"resumable":"1.0.0","max_chunk_size":"# + hostile + "}}}}}}")
            }
        }
        #expect(throws: ProtocolViolation.self) { try ServerCapabilities.parse(json: #"{"ocs":{"meta":{}}}"#) }
    }
}

extension ServerStatus {
    static func parse(json: String) throws(ProtocolViolation) -> ServerStatus? { try parse(Array(json.utf8)) }
}

extension ServerCapabilities {
    static func parse(json: String) throws(ProtocolViolation) -> ServerCapabilities { try parse(Array(json.utf8)) }
}

@Suite("The address a person types")
struct DiscoveryAddressTests {
    @Test("is cut back to the server's base; impossible user ids are refused")
    func normalize() throws {
        #expect(try ServerDiscovery.normalize("https://cloud.example.org/") == "https://cloud.example.org")
        #expect(try ServerDiscovery.normalize(" https://h/nextcloud/remote.php/dav/files/alice/x ") == "https://h/nextcloud")
        #expect(try ServerDiscovery.normalize("https://h:8443/nc/index.php/apps/files/?dir=/") == "https://h:8443/nc")
        #expect(try ServerDiscovery.normalize("http://user:pw@h/status.php#x") == "http://h")
        #expect(throws: ProtocolViolation.self) { try ServerDiscovery.normalize("cloud.example.org") }
        for id in ["..", "a/b", "", "x\u{1b}[2J"] {
            let json = #"{"ocs":{"data":{"id":"\#(id.unicodeScalars.map { $0.value < 0x20 ? String(format: "\\u%04x", $0.value) : String($0) }.joined())"}}}"#
            #expect(throws: ProtocolViolation.self, "\(id)") { try ServerDiscovery.userID(from: Array(json.utf8)) }
        }
        #expect(try ServerDiscovery.userID(from: Array(#"{"ocs":{"data":{"id":"Alice Smith@ldap"}}}"#.utf8)) == "Alice Smith@ldap")
    }
}
