import Desktop
import Foundation
import Platform
import TestSupport
import Testing

/// The password lookup tells "not stored" from "cannot be read now", against a real Secret
/// Service on a private bus (absent, locked, unlocked) and the credentials file.
@Suite("Secret store")
struct SecretStoreTests {
    let home = TemporaryFolder("iu-secrets")

    func store(bus: SessionBusDaemon?) -> SecretStore {
        var environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/config", "XDG_RUNTIME_DIR": home.path + "/run"]
        if let bus { environment.merge(bus.environment) { _, b in b } }
        return SecretStore(paths: XDGPaths(environment: environment))
    }

    var credentialsFile: String { home.path + "/config/instant-upload/credentials" }

    /// Saves where no session bus is: the credentials file, with nothing to ask.
    func saveInFile(account: String, password: String) throws {
        try store(bus: nil).save(account: account, password: password) { why in
            Issue.record("asked whether to use the file without a keyring: \(why)")
            return false
        }
    }

    @Test("a keyring that has not started yet makes the password unavailable, not missing")
    func keyringNotStarted() throws {
        let bus = try SessionBusDaemon()
        guard case .unavailable(let why) = store(bus: bus).lookup(account: "home") else {
            Issue.record("expected unavailable, got \(store(bus: bus).lookup(account: "home"))")
            return
        }
        #expect(why.contains("no keyring"), "\(why)")
    }

    @Test("a locked keyring makes the password unavailable; once unlocked it is found")
    func lockedThenUnlocked() throws {
        let bus = try SessionBusDaemon()
        let keyring = try SecretServiceStandIn(bus: bus, items: [SecretServiceStandIn.password("s3cret", account: "home")], locked: true)
        #expect(store(bus: bus).lookup(account: "home") == .unavailable("the keyring is locked"))
        try keyring.unlock()
        #expect(store(bus: bus).lookup(account: "home") == .found("s3cret"))
        #expect(!(try keyring.calls().contains { $0.method == "Unlock" }), "a lookup never asks to unlock (no prompts from the agent)")
    }

    @Test("a keyring that answers it has none: the credentials file, else not stored")
    func notInKeyring() throws {
        let bus = try SessionBusDaemon()
        let keyring = try SecretServiceStandIn(bus: bus, items: [SecretServiceStandIn.password("other", account: "work")])
        #expect(store(bus: bus).lookup(account: "home") == .notStored)
        try saveInFile(account: "home", password: "from-file")
        #expect(store(bus: bus).lookup(account: "home") == .found("from-file"))
        #expect(try keyring.lookups(of: "home") == 2)
    }

    @Test("a password in the credentials file is found while the keyring is locked or absent")
    func fileWhileKeyringLocked() throws {
        let bus = try SessionBusDaemon()
        try saveInFile(account: "home", password: "from-file")
        #expect(store(bus: bus).lookup(account: "home") == .found("from-file"))
        let keyring = try SecretServiceStandIn(bus: bus, items: [], locked: true)
        #expect(store(bus: bus).lookup(account: "home") == .found("from-file"))
        withExtendedLifetime(keyring) {}
    }

    @Test("with no session bus and nothing in the file, the password is unavailable, not missing")
    func noBus() {
        guard case .unavailable = store(bus: nil).lookup(account: "home") else {
            Issue.record("expected unavailable")
            return
        }
    }

    // MARK: The credentials file

    @Test("a credentials file that others can read or change is refused, with the command that fixes it", arguments: [
        0o644, 0o660, 0o602,
    ] as [mode_t])
    func openToOthersIsRefused(mode: mode_t) throws {
        try saveInFile(account: "home", password: "from-file")
        try #require(chmod(credentialsFile, mode) == 0)

        guard case .unavailable(let why) = store(bus: nil).lookup(account: "home") else {
            Issue.record("a credentials file of mode \(String(mode, radix: 8)) was read: \(store(bus: nil).lookup(account: "home"))")
            return
        }
        #expect(why.contains("by others (mode \(String(mode, radix: 8)))"), "\(why)")
        #expect(why.contains("`chmod 600 \(credentialsFile)`"), "\(why)")
        let refused = #expect(throws: SecretStoreError.self) { try saveInFile(account: "work", password: "new") }
        #expect(refused?.fix == "chmod 600 \(credentialsFile)")

        // The command, run as it is said, puts it right.
        try Shell.run("/bin/sh", ["-c", try #require(refused?.fix)])
        #expect(store(bus: nil).lookup(account: "home") == .found("from-file"))
    }

    @Test("a credentials file that is not this user's is refused, with the chown that fixes it")
    func someoneElsesIsRefused() throws {
        try saveInFile(account: "home", password: "from-file")
        try #require(getuid() == 0, "giving the file to another user needs root (CI runs as root)")
        try #require(chown(credentialsFile, 65534, 65534) == 0)

        guard case .unavailable(let why) = store(bus: nil).lookup(account: "home") else {
            Issue.record("another user's credentials file was read")
            return
        }
        #expect(why.contains("belongs to nobody, not to you"), "\(why)")
        let refused = #expect(throws: SecretStoreError.self) { try saveInFile(account: "work", password: "new") }
        #expect(refused?.fix == "chown root \(credentialsFile)")
        try Shell.run("/bin/sh", ["-c", try #require(refused?.fix)])
        #expect(store(bus: nil).lookup(account: "home") == .found("from-file"))
    }

    // MARK: A keyring that refuses to store

    @Test("a keyring that refuses to store a password: the person is asked, with why, before anything goes to the file; no means nothing is saved")
    func keyringRefusesAndThePersonSaysNo() throws {
        let bus = try SessionBusDaemon()
        // The stand-in answers lookups only: `secret-tool store` fails against it.
        let keyring = try SecretServiceStandIn(bus: bus, items: [])
        var asked: [String] = []
        let refused = #expect(throws: SecretStoreError.self) {
            try store(bus: bus).save(account: "home", password: "s3cret") { why in
                asked.append(why)
                return false
            }
        }
        #expect(asked.count == 1 && asked.first?.contains("refused to store the password") == true, "\(asked)")
        #expect(refused?.keyringRefused == true)
        #expect(refused?.description.contains("nothing was saved") == true, "\(String(describing: refused))")
        #expect(!FileManager.default.fileExists(atPath: credentialsFile), "the password was written to the file without asking")
        withExtendedLifetime(keyring) {}
    }

    @Test("a keyring that refuses to store a password: a yes keeps it in the file, readable only by this user")
    func keyringRefusesAndThePersonSaysYes() throws {
        let bus = try SessionBusDaemon()
        let keyring = try SecretServiceStandIn(bus: bus, items: [])
        var asked = 0
        let backend = try store(bus: bus).save(account: "home", password: "s3cret") { _ in
            asked += 1
            return true
        }
        #expect(asked == 1 && backend == .file)
        var st = stat()
        #expect(stat(credentialsFile, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(store(bus: bus).lookup(account: "home") == .found("s3cret"))
        withExtendedLifetime(keyring) {}
    }

    @Test("a session with no keyring at all keeps the password in the file without asking")
    func noKeyringInTheSession() throws {
        let bus = try SessionBusDaemon()
        let backend = try store(bus: bus).save(account: "home", password: "s3cret") { why in
            Issue.record("asked although the session offers no keyring: \(why)")
            return false
        }
        #expect(backend == .file)
        #expect(store(bus: nil).lookup(account: "home") == .found("s3cret"))
    }
}
