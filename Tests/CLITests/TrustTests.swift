import Foundation
import Glibc
import TestSupport
import Testing

/// A server with a private certificate authority, over real TLS: the CA file named for the
/// account (`account add --ca-file`) or in the config (`ca_file`) is trusted by every request
/// the program makes, the CLI's own and the agent's; without it each request fails as `tls`;
/// a CA file that is not there stops the program, naming it.
@Suite("Trust in a private certificate authority")
struct TrustTests {
    static func addArguments(_ server: ReferenceServer) -> [String] {
        ["account", "add", "--webdav", server.webdavURL(), "--tus", server.tusURL, "--user", "alice", "--name", "home", "--password-stdin"]
    }

    static func requests(_ server: ReferenceServer, _ method: String) throws -> Int {
        ((try server.stats()["requests"] as? [String: Any])?[method] as? Int) ?? 0
    }

    static func item(_ items: [[String: Any]], source: String) -> [String: Any]? {
        items.first { $0["source"] as? String == source }
    }

    @Test("an account's --ca-file is trusted by account add, download, retry's check and the agent's upload, check and cancel")
    func accountCAFile() throws {
        let certificates = try TestCertificates()
        let server = try ReferenceServer(tls: certificates)
        #expect(server.baseURL.hasPrefix("https://"))
        try server.makeFolder("X")
        let session = try AgentHarness()

        let refused = try session.cli(Self.addArguments(server), stdin: "wonderland\n")
        #expect(refused.status == 1, "a certificate to trust is the person's to give: \(refused.stdout) \(refused.stderr)")
        #expect(refused.stderr.contains("certificate could not be verified"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--ca-file"), "says what to do: \(refused.stderr)")

        let added = try session.cli(Self.addArguments(server) + ["--ca-file", certificates.caFile], stdin: "wonderland\n")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try session.cli(["account", "list"]).stdout.contains("CA file \(certificates.caFile)"))

        // The agent's upload, and its check of the server's copy after it (PROPFIND).
        let file = try session.home.randomFile("in/a.bin", size: 200_000)
        let propfinds = try Self.requests(server, "PROPFIND")
        #expect(try session.cli(["upload", "--to", "/X", file]).status == 0)
        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        #expect(try TestData.sha256(ofFile: server.tree() + "/X/a.bin") == TestData.sha256(ofFile: file))
        #expect(try Self.requests(server, "PROPFIND") > propfinds, "the check after the upload reached the server")

        // The CLI's look at the remote file, then the agent's download.
        let download = try session.cli(["download", "/X/a.bin"])
        #expect(download.status == 0, "\(download.stderr)")
        try session.waitFor("the download completed") { items in
            items.contains { $0["direction"] as? String == "download" && $0["state"] as? String == "completed" }
        }
        var st = stat()
        #expect(stat(session.downloads, &st) == 0 && st.st_mode & 0o777 == 0o755, "Local Drive keeps its mode, it is not a private folder")

        // Cancel of an upload waiting to retry: the agent ends it on the server (DELETE).
        try server.fault(["method": "PATCH", "status": 500, "count": 1000])
        let waiting = try session.home.randomFile("in/waiting.bin", size: 100_000, seed: 7)
        #expect(try session.cli(["upload", "--to", "/X", waiting]).status == 0)
        try session.waitFor("the upload waits to retry") { Self.item($0, source: waiting)?["state"] as? String == "retrying" }
        let id = try #require(Self.item(try session.items(), source: waiting)?["id"] as? Int)
        let cancel = try session.cli(["cancel", String(id)])
        #expect(cancel.stdout.contains("cancelled #\(id)"), "\(cancel.stdout) \(cancel.stderr)")
        #expect(try Self.requests(server, "DELETE") == 1, "the cancel's DELETE reached the server: \(session.agentLog.suffix(2000))")
        try server.clearFaults()

        // Retry of a quota failure asks the server for its space first.
        try server.setQuota(availableBytes: 1000)
        let big = try session.home.randomFile("in/big.bin", size: 300_000, seed: 9)
        #expect(try session.cli(["upload", "--to", "/X", big]).status == 0)
        try session.waitFor("the upload failed for quota") { (Self.item($0, source: big)?["reason"] as? [String: Any])?["code"] as? String == "quota" }
        let bigID = try #require(Self.item(try session.items(), source: big)?["id"] as? Int)
        let retry = try session.cli(["retry", String(bigID)])
        #expect(retry.status == 1, "\(retry.stdout) \(retry.stderr)")
        #expect(retry.stderr.contains("still not enough space"), "the check reached the server: \(retry.stderr)")
    }

    @Test("account add URL finds the protocol over TLS with --ca-file, on tus and on Nextcloud, and the agent's look at status.php trusts it too")
    func discoveryAndMaintenance() throws {
        let certificates = try TestCertificates()
        for face in [ReferenceServer.Face.tus, .nextcloud] {
            let server = try ReferenceServer(face: face, tls: certificates)
            let session = try AgentHarness()
            let add = ["account", "add", face == .nextcloud ? server.baseURL : server.webdavURL(), "--user", "alice", "--password-stdin"]
            let refused = try session.cli(add, stdin: "wonderland\n")
            #expect(refused.status == 1, "\(face): \(refused.stdout) \(refused.stderr)")
            #expect(refused.stderr.contains("--ca-file"), "\(face): \(refused.stderr)")
            let added = try session.cli(add + ["--ca-file", certificates.caFile], stdin: "wonderland\n")
            #expect(added.status == 0, "\(face): \(added.stdout) \(added.stderr)")
            guard face == .nextcloud else { continue }

            // In maintenance from the start: the agent asks status.php, over the same trust.
            try server.setMaintenance(true)
            let file = try session.home.randomFile("in/a.bin", size: 100_000)
            #expect(try session.cli(["upload", "--to", "/X", file]).status == 0)
            try session.startAgent()
            try session.waitFor("the row waiting as maintenance") { items in
                (items.first?["reason"] as? [String: Any])?["code"] as? String == "maintenance"
            }
            try server.setMaintenance(false)
            try session.waitForAll("completed", count: 1)
            #expect(try TestData.sha256(ofFile: server.tree() + "/X/a.bin") == TestData.sha256(ofFile: file))
        }
    }

    @Test("ca_file in the config is trusted by the CLI and the agent; without it both fail as tls")
    func configCAFile() throws {
        let certificates = try TestCertificates()
        let server = try ReferenceServer(tls: certificates)
        try server.makeFolder("X")
        let session = try AgentHarness()
        let trusting = "[agent]\nautostart = false\n[transfers]\nca_file = \(certificates.caFile)\n"
        try session.writeConfig(trusting)
        #expect(try session.cli(Self.addArguments(server), stdin: "wonderland\n").status == 0)

        let file = try session.home.randomFile("in/a.bin", size: 100_000)
        #expect(try session.cli(["upload", "--to", "/X", file]).status == 0)
        try session.startAgent()
        try session.waitForAll("completed", count: 1)
        #expect(try session.cli(["download", "/X/a.bin"]).status == 0)
        try session.waitFor("the download completed") { $0.allSatisfy { $0["state"] as? String == "completed" } && $0.count == 2 }
        session.stopAgent()

        // The same server without the CA: the CLI's request and the agent's fail as tls.
        try session.writeConfig("[agent]\nautostart = false\n")
        let download = try session.cli(["download", "/X/a.bin"])
        #expect(download.status == 1)
        #expect(download.stderr.contains("certificate could not be verified"), "\(download.stderr)")
        let other = try session.home.randomFile("in/b.bin", size: 100_000, seed: 3)
        #expect(try session.cli(["upload", "--to", "/X", other]).status == 0)
        try session.startAgent()
        try session.waitFor("the upload failed as tls") { items in
            let row = Self.item(items, source: other)
            return row?["state"] as? String == "failed" && (row?["reason"] as? [String: Any])?["code"] as? String == "tls"
        }
        #expect(!FileManager.default.fileExists(atPath: server.tree() + "/X/b.bin"))
    }

    @Test("a CA file that is not there stops account add, upload, download and the agent with exit 3, naming it")
    func missingCAFile() throws {
        let certificates = try TestCertificates()
        let server = try ReferenceServer(tls: certificates)
        let session = try AgentHarness()
        let missing = session.home.path + "/nowhere/ca.pem"

        let add = try session.cli(Self.addArguments(server) + ["--ca-file", missing], stdin: "wonderland\n")
        #expect(add.status == 3, "\(add.stderr)")
        #expect(add.stderr.contains(missing), "\(add.stderr)")
        #expect((try JSONSerialization.jsonObject(with: Data(session.cli(["account", "list", "--json"]).stdout.utf8)) as? [Any])?.isEmpty == true, "no account was saved")

        // A file that is there but holds no certificate is no CA file either.
        let notPEM = try session.home.file("not-a-ca.pem", bytes: Array("hello".utf8))
        let addNotPEM = try session.cli(Self.addArguments(server) + ["--ca-file", notPEM], stdin: "wonderland\n")
        #expect(addNotPEM.status == 3 && addNotPEM.stderr.contains(notPEM), "\(addNotPEM.stderr)")

        // An account whose CA file went away after it was added.
        let copy = session.home.path + "/ca-copy.pem"
        try FileManager.default.copyItem(atPath: certificates.caFile, toPath: copy)
        #expect(try session.cli(Self.addArguments(server) + ["--ca-file", copy], stdin: "wonderland\n").status == 0)
        try FileManager.default.removeItem(atPath: copy)
        let file = try session.home.file("in/a.jpg", bytes: [1, 2, 3])
        for arguments in [["upload", "--to", "/X", file], ["download", "/X/a.bin"]] {
            let r = try session.cli(arguments)
            #expect(r.status == 3, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(copy), "\(arguments): \(r.stderr)")
        }

        // The config's ca_file, for every command that reads the config and for the agent.
        try session.writeConfig("[agent]\nautostart = false\n[transfers]\nca_file = \(missing)\n")
        for arguments in [["upload", "--to", "/X", file], ["download", "/X/a.bin"], ["run", "--until-idle"]] {
            let r = try session.cli(arguments)
            #expect(r.status == 3, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(missing) && r.stderr.contains("cannot be read"), "\(arguments): \(r.stderr)")
        }
        #expect(try session.items().isEmpty, "nothing was queued")
    }

    /// The crypto library's error texts are not loaded (`OpenSSLSetUp`); the TLS library's
    /// still are, and a handshake that fails says why in its words.
    @Test("https:// to a server that speaks plain HTTP fails in our words, with the TLS library's reason in words too")
    func handshakeReasonInWords() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        let https = server.baseURL.replacingOccurrences(of: "http://", with: "https://")
        let r = try session.cli(["account", "add", https, "--user", "alice", "--password-stdin"], stdin: "wonderland\n")
        #expect(r.status == 1, "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains("a secure connection to the server could not be set up"), "\(r.stderr)")
        #expect(r.stderr.contains("wrong version number"), "\(r.stderr)")
    }
}
