import Foundation
@testable import Queue
import TestSupport
import Testing

@Suite("What an account keeps about its server")
struct AccountProfileTests {
    let folder = TemporaryFolder("iu-accounts")
    var path: String { folder.path + "/state/queue.sqlite3" }

    @Test("kind, version, protocol, addresses and user id are saved, read back by name, and changed by adding the account again")
    func roundTrip() throws {
        let store = try QueueStore(path: path)
        let profile = ServerProfile(kind: .nextcloud, product: "Nextcloud", version: "28.0.4", baseURL: "https://c/nc",
                                    uploadMethod: .nextcloudChunking, uploadsURL: "https://c/nc/remote.php/dav/uploads/a%20b/",
                                    userID: "a b")
        let added = try store.addAccount(name: "home", webdavURL: "https://c/nc/remote.php/dav/files/a%20b/", tusURL: nil,
                                         username: "alice", server: profile)
        #expect(added.server == profile && added.tusURL == nil)
        #expect(added.server.hasStatusPage && !added.server.createsTusInFolders)
        #expect(added.addresses == ["https://c/nc/remote.php/dav/files/a%20b/", "https://c/nc/remote.php/dav/uploads/a%20b/", "https://c/nc"])
        #expect(!added.isOnThisMachine)
        let plain = ServerProfile(kind: .webdav, uploadMethod: .webdavPut, putViaTemporary: true)
        let again = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/", tusURL: nil, username: "alice", server: plain)
        #expect(again.id == added.id && again.server == plain && !again.server.hasStatusPage && again.isOnThisMachine)
        let ocis = ServerProfile(kind: .owncloud, product: "Infinite Scale", baseURL: "https://o", uploadMethod: .tus, maxChunkSize: 10_000_000)
        let o = try store.addAccount(name: "o", webdavURL: "https://o/d/", tusURL: "https://o/d/", username: "a", server: ocis)
        #expect(o.server == ocis && o.server.createsTusInFolders)
    }

    @Test("accounts from before discovery read as tus beside WebDAV, their addresses kept")
    func oldAccounts() throws {
        try FileManager.default.createDirectory(atPath: folder.path + "/state", withIntermediateDirectories: true)
        do {
            let old = try Database(path: path)
            for sql in Schema.migrations.prefix(5) { try old.execute(sql) }
            try old.execute("PRAGMA user_version = 5")
            try old.execute("INSERT INTO accounts (id, name, webdav_url, tus_url, username, wifi_only, created_at) VALUES (3, 'home', 'http://h/dav/u/', 'http://h/files/', 'u', 0, 5)")
        }
        let store = try QueueStore(path: path)
        let account = try #require(try store.account(named: "home"))
        #expect(account.tusURL == "http://h/files/" && account.webdavURL == "http://h/dav/u/")
        #expect(account.server == ServerProfile(kind: .webdav, uploadMethod: .tus))
    }
}
