import Foundation
import Glibc
import Queue
import TestSupport
import Testing

/// Passwords from a real Secret Service on a private session bus: a keyring that is not
/// there yet or locked holds rows (never unauthenticated, never `auth`), each account's
/// password is read once, and a refused one is read again.
@Suite("Credentials")
struct CredentialTests {
    /// A person whose password lives only in the keyring: the account is written straight
    /// to the queue (`account add` would keep the password in the file when no keyring takes it).
    struct Scene {
        let bus: SessionBusDaemon
        let server: ReferenceServer
        let session: AgentHarness
        var files: [String] = []

        init(files count: Int) throws {
            bus = try SessionBusDaemon()
            server = try ReferenceServer()
            try server.makeFolder("In")
            session = try AgentHarness(extraEnvironment: bus.environment)
            try session.writeConfig(agentConfig(stallSeconds: 10))
            let store = try QueueStore(path: session.databasePath)
            try store.addAccount(name: "home", webdavURL: server.webdavURL(), tusURL: server.tusURL, username: "alice")
            for i in 0..<count { files.append(try session.home.randomFile("pictures/p\(i).jpg", size: 150_000, seed: UInt64(i))) }
            guard count > 0 else { return }
            let r = try session.cli(["upload", "--to", "/In"] + files)
            guard r.status == 0 else { throw TestFailure("upload failed (\(r.status)): \(r.stderr)") }
        }

        func serverRequests() throws -> Int {
            ((try server.stats()["requests"] as? [String: Any]) ?? [:]).values.compactMap { $0 as? Int }.reduce(0, +)
        }

        func expectIdentical() throws {
            for (i, file) in files.enumerated() {
                #expect(try TestData.sha256(ofFile: server.tree() + "/In/p\(i).jpg") == (try TestData.sha256(ofFile: file)))
            }
        }
    }

    static func reasonCode(_ item: [String: Any]) -> String? { (item["reason"] as? [String: Any])?["code"] as? String }

    @Test("rows wait as `credentials` while the keyring is not started, then locked; nothing is sent; unlocked, they go")
    func waitsForTheKeyring() async throws {
        try await offThePool {
            let scene = try Scene(files: 2)
            let s = scene.session
            try s.startAgent()
            try s.waitFor("both rows waiting for the password", timeout: 30) { items in
                items.count == 2 && items.allSatisfy { $0["state"] as? String == "queued" && Self.reasonCode($0) == "credentials" }
            }
            #expect(try scene.serverRequests() == 0, "nothing went to the server without a password")

            // The keyring starts, locked: asked again by itself, and the rows keep waiting.
            let keyring = try SecretServiceStandIn(bus: scene.bus, items: [SecretServiceStandIn.password("wonderland", account: "home")],
                                                   locked: true)
            try Poll.until("the agent asks the keyring", seconds: 30) { try keyring.lookups(of: "home") >= 1 }
            usleep(500_000)
            let waiting = try s.items()
            #expect(waiting.allSatisfy { $0["state"] as? String == "queued" && Self.reasonCode($0) == "credentials" }, "\(waiting)")
            #expect(try scene.serverRequests() == 0, "nothing went to the server while the keyring was locked")

            try keyring.unlock()
            try s.waitForAll("completed", count: 2, timeout: 60)
            try scene.expectIdentical()
            #expect(s.agentIsRunning)
            #expect(!s.agentLog.contains("wonderland"))
        }
    }

    /// With every account held, the scheduler asks for no rows behind them: a query leaving
    /// the held accounts out would read every waiting row to find none, at each pass. The
    /// agent writes each statement's plan as it first prepares it (`INSTANT_UPLOAD_EXPLAIN`),
    /// so such a query would show in its log.
    @Test("while the only account waits for its password, the scheduler does not read the rows behind it")
    func heldAccountIsNotReadPast() async throws {
        try await offThePool {
            let scene = try Scene(files: 2)
            let s = scene.session
            s.environment["INSTANT_UPLOAD_EXPLAIN"] = "1"
            try s.startAgent()
            try s.waitFor("both rows waiting for the password", timeout: 30) { items in
                items.count == 2 && items.allSatisfy { Self.reasonCode($0) == "credentials" }
            }
            let log = s.agentLog
            #expect(log.contains("query plan: SELECT * FROM (SELECT t.id AS id"), "the rows were looked for once:\n\(log.suffix(3000))")
            #expect(!log.contains("account_id NOT IN"), "a query left the held account out:\n\(log.suffix(3000))")
        }
    }

    @Test("an account's password is read from the keyring once, however many transfers use it")
    func readOncePerAccount() async throws {
        try await offThePool {
            let scene = try Scene(files: 6)
            let keyring = try SecretServiceStandIn(bus: scene.bus, items: [SecretServiceStandIn.password("wonderland", account: "home")])
            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 6, timeout: 60)
            try scene.expectIdentical()
            let calls = try keyring.calls().map(\.method)
            #expect(try keyring.lookups(of: "home") == 1, "\(calls)")
        }
    }

    @Test("a password the server refuses is read again: saved anew and retried, the upload goes")
    func refusedPasswordIsReadAgain() async throws {
        try await offThePool {
            let scene = try Scene(files: 1)
            let s = scene.session
            let keyring = try SecretServiceStandIn(bus: scene.bus, items: [SecretServiceStandIn.password("not-it", account: "home")])
            try s.startAgent()
            try s.waitFor("an auth failure", timeout: 30) { $0.first?["state"] as? String == "failed" && Self.reasonCode($0.first!) == "auth" }
            try keyring.setPassword("wonderland", account: "home")
            let id = try #require(try s.items().first?["id"] as? Int)
            #expect(try s.cli(["retry", String(id)]).status == 0)
            try s.waitForAll("completed", count: 1, timeout: 30)
            try scene.expectIdentical()
            #expect(try keyring.lookups(of: "home") == 2)
        }
    }

    @Test("a password that cannot be read while the whole queue is paused: the agent sleeps, instead of waking for an ask no pass makes")
    func pausedWhileThePasswordWaits() async throws {
        try await offThePool {
            let scene = try Scene(files: 2)
            let s = scene.session
            try s.startAgent()
            try s.waitFor("both rows waiting for the password", timeout: 30) { items in
                items.count == 2 && items.allSatisfy { Self.reasonCode($0) == "credentials" }
            }
            #expect(try s.cli(["pause", "--all"]).status == 0)
            try s.waitFor("both rows paused") { items in items.allSatisfy { Self.reasonCode($0) == "paused" } }
            // The password is due to be asked again 10 s after it was; the paused queue's pass
            // never asks it, and a wait that counted it woke every 10 ms from then on.
            usleep(11_000_000)
            let woken = try s.schedulerWakeUps(over: 3)
            #expect(woken < 30, "the scheduler woke \(woken) times in 3 s")
        }
    }

    @Test("an account saved again for another server and user while the agent runs: its password is read anew, the old one never goes there")
    func accountSavedAgainIsAskedAnew() async throws {
        try await offThePool {
            let first = try ReferenceServer()
            try first.makeFolder("In")
            let second = try ReferenceServer(users: [("bob", "builder")])
            try second.makeFolder("In", user: "bob")
            let s = try AgentHarness()
            try s.writeConfig(agentConfig(stallSeconds: 10))
            try s.addAccount(first, name: "home")
            let before = try s.home.randomFile("before.jpg", size: 20_000, seed: 1)
            #expect(try s.cli(["upload", "--to", "/In", before]).status == 0)
            try s.startAgent()
            try s.waitForAll("completed", count: 1)

            // Same name, another server and user: the agent knew alice's password for "home".
            try s.addAccount(second, user: "bob", password: "builder", name: "home")
            let after = try s.home.randomFile("after.jpg", size: 20_000, seed: 2)
            #expect(try s.cli(["upload", "--to", "/In", after]).status == 0)
            try s.waitFor("the second upload ended") { items in
                items.contains { $0["name"] as? String == "after.jpg" && ["completed", "failed"].contains($0["state"] as? String) }
            }
            let row = try #require(try s.items().first { $0["name"] as? String == "after.jpg" })
            #expect(row["state"] as? String == "completed", "\(row)")
            #expect(try TestData.sha256(ofFile: second.tree("bob") + "/In/after.jpg") == (try TestData.sha256(ofFile: after)))
        }
    }

    @Test("download with the keyring locked says so and asks the server nothing")
    func downloadWithLockedKeyring() async throws {
        try await offThePool {
            let scene = try Scene(files: 0)
            let keyring = try SecretServiceStandIn(bus: scene.bus, items: [SecretServiceStandIn.password("wonderland", account: "home")],
                                                   locked: true)
            let r = try scene.session.cli(["download", "/In/anything.pdf"])
            #expect(r.status == 3, "\(r.stdout) \(r.stderr)")
            #expect(r.stderr.contains("cannot be read now") && r.stderr.contains("unlock your keyring"), "\(r.stderr)")
            #expect(try scene.serverRequests() == 0, "nothing went to the server without a password")
            #expect(try keyring.lookups(of: "home") == 1)
        }
    }
}
