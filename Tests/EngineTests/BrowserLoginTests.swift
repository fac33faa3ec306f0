import Foundation
import Glibc
import Platform
import TestSupport
import Testing

@Suite("Logging in to a Nextcloud in the browser (Login Flow v2)")
struct BrowserLoginTests {
    /// Reads the command's output until a line that is an address on its own.
    static func loginAddress(_ process: ChildProcess, timeout: Double = 20) throws -> String {
        let handle = try #require(process.standardOutput)
        var text = ""
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("http") }) { return String(line) }
        }
        throw TestFailure("no login address on a line of its own in: \(text)")
    }

    /// A stand-in `xdg-open` on PATH that writes down what it was asked to open.
    static func recordingOpener(in folder: TemporaryFolder) throws -> (path: String, record: String) {
        let record = folder.path + "/opened.txt"
        let script = try folder.file("bin/xdg-open", bytes: Array("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(record)'\n".utf8))
        chmod(script, 0o755)
        return (folder.path + "/bin", record)
    }

    @Test("account add URL without --user prints the address, opens it where there is a display, is approved, exits 0; uploads work; the real password is kept nowhere")
    func approved() async throws {
        try await offThePool {
            let server = try ReferenceServer(face: .nextcloud)
            let s = try AgentHarness()
            let tools = TemporaryFolder("iu-tools")
            let opener = try Self.recordingOpener(in: tools)
            let process = try s.spawn(["account", "add", server.baseURL, "--name", "home"],
                                      environment: ["DISPLAY": ":77", "PATH": opener.path + ":" + (s.environment["PATH"] ?? "/usr/bin:/bin")])
            let address = try Self.loginAddress(process)
            #expect(address.hasPrefix(server.baseURL + "/index.php/login/v2/flow/"))
            try server.approveLogin(user: "alice", loginURL: address)
            #expect(process.wait(seconds: 30), "the command ends once the login is approved")
            let errors = String(decoding: process.standardError?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            #expect(process.terminationStatus == 0, "\(errors)")
            #expect((try? String(contentsOfFile: opener.record, encoding: .utf8)) == address + "\n", "opened with xdg-open")

            let listed = try #require(try JSONSerialization.jsonObject(with: Data(s.cli(["account", "list", "--json"]).stdout.utf8)) as? [[String: Any]])
            #expect(listed.first?["user"] as? String == "alice" && listed.first?["upload_protocol"] as? String == "nextcloud-chunking")

            // Only the app password the server gave is kept: never the real one, never in the queue.
            let credentials = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.home.path + "/config/instant-upload/credentials"))) as? [String: String])
            let kept = try #require(credentials["home"])
            #expect(kept != "wonderland" && kept.count >= 20)
            let logins = try server.control("GET", "login") as? [String: Any]
            #expect(String(describing: logins ?? [:]).contains("alice"), "the server handed out an app password: \(logins ?? [:])")
            for file in ["queue.sqlite3", "queue.sqlite3-wal"] {
                let bytes = (try? Data(contentsOf: URL(fileURLWithPath: s.home.path + "/state/instant-upload/" + file))) ?? Data()
                #expect(bytes.range(of: Data("wonderland".utf8)) == nil && bytes.range(of: Data(kept.utf8)) == nil, "\(file) holds no password")
            }

            let photo = try s.home.randomFile("p.jpg", size: 123_456, seed: 5)
            #expect(try s.cli(["upload", "--to", "/", photo]).status == 0)
            try s.startAgent()
            try s.waitForAll("completed", count: 1, timeout: 60)
            #expect(try TestData.sha256(ofFile: server.tree() + "/p.jpg") == (try TestData.sha256(ofFile: photo)))
        }
    }

    @Test("Ctrl-C while it waits for the login stops it cleanly: exit 130, nothing saved, nothing opened without a display")
    func interrupted() async throws {
        try await offThePool {
            let server = try ReferenceServer(face: .nextcloud)
            let s = try AgentHarness()
            let tools = TemporaryFolder("iu-tools")
            let opener = try Self.recordingOpener(in: tools)
            var environment = ["PATH": opener.path + ":" + (s.environment["PATH"] ?? "/usr/bin:/bin")]
            environment["DISPLAY"] = ""
            environment["WAYLAND_DISPLAY"] = ""
            let process = try s.spawn(["account", "add", server.baseURL, "--login", "--user", "alice"], environment: environment)
            _ = try Self.loginAddress(process)
            usleep(300_000)
            process.send(SIGINT)
            #expect(process.wait(seconds: 10), "Ctrl-C ends the wait at once")
            let errors = String(decoding: process.standardError?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            #expect(process.terminationStatus == 130 && !process.wasSignalled, "\(errors)")
            #expect(errors.contains("nothing was saved"))
            #expect((try JSONSerialization.jsonObject(with: Data(s.cli(["account", "list", "--json"]).stdout.utf8)) as? [Any])?.isEmpty == true)
            #expect(!FileManager.default.fileExists(atPath: s.home.path + "/config/instant-upload/credentials"))
            #expect(!FileManager.default.fileExists(atPath: opener.record), "no display: nothing opened")
        }
    }

    @Test("a server without Nextcloud's browser login asks for --user, and says why")
    func noBrowserLogin() async throws {
        try await offThePool {
            let s = try AgentHarness()
            let owncloud = try ReferenceServer(arguments: ["--product", "owncloud"], face: .nextcloud)
            let r = try s.cli(["account", "add", owncloud.baseURL])
            #expect(r.status == 2 && r.stderr.contains("ownCloud does not offer Nextcloud's browser login") && r.stderr.contains("--user NAME"), "\(r.stderr)")
            let plain = try ReferenceServer(face: .webdav)
            let p = try s.cli(["account", "add", plain.webdavURL()])
            #expect(p.status == 2 && p.stderr.contains("offers no browser login"), "\(p.stderr)")
            let maintenance = try ReferenceServer(face: .nextcloud)
            try maintenance.setMaintenance(true)
            let m = try s.cli(["account", "add", maintenance.baseURL])
            #expect(m.status == 3 && m.stderr.contains("maintenance mode"), "\(m.stderr)")
        }
    }
}
