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
        try store(bus: nil).save(account: "home", password: "from-file")
        #expect(store(bus: bus).lookup(account: "home") == .found("from-file"))
        #expect(try keyring.lookups(of: "home") == 2)
    }

    @Test("a password in the credentials file is found while the keyring is locked or absent")
    func fileWhileKeyringLocked() throws {
        let bus = try SessionBusDaemon()
        try store(bus: nil).save(account: "home", password: "from-file")
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
}
