import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing
import Transport

/// An upload that is a new version of a file on the server (a downloaded file edited here)
/// replaces that file only while the server still has the version it was made from; any
/// other version stays, and the new one goes beside it as a conflicted copy.
@Suite("A new version replaces only the version it was made from")
struct NewVersionTests {
    static let kinds: [ServerKind] = [.nextcloud, .referenceWebDAV, .apache, .tusAndWebDAV]

    @Test("the server still has the version downloaded: it becomes the new version, no copy beside it, and the row keeps the new ETag",
          arguments: kinds)
    func replacesTheVersionItWasMadeFrom(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try NewVersionScene(kind, hold: nil)
            let before = try scene.serverETag()
            let id = try scene.enqueueNewVersion(replacing: before)
            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 120)
            #expect(try TestData.sha256(ofFile: scene.onServer("report.odt")) == (try TestData.sha256(ofFile: scene.local)))
            #expect(try scene.listing() == ["report.odt"], "no copy beside it (\(kind)); log: \(scene.session.agentLog.suffix(1500))")
            let row = try #require(try QueueStore(path: scene.session.databasePath).transfer(id: id))
            let after = try scene.serverETag()
            #expect(row.remotePath == "/Documents/report.odt", "\(row.remotePath)")
            #expect(row.versionETag.map { Replacing.sameVersion($0, after) } == true && !Replacing.sameVersion(after, before),
                    "recorded \(row.versionETag ?? "-"), now \(after), before \(before)")
        }
    }

    @Test("the server's copy changed before the upload began: it stays, the new version goes beside it as a conflicted copy",
          arguments: kinds)
    func changedBeforeTheUpload(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try NewVersionScene(kind, hold: nil)
            let downloaded = try scene.serverETag()
            let theirs = try scene.changeServerCopy()
            let id = try scene.enqueueNewVersion(replacing: downloaded)
            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 120)
            try scene.expectConflictedCopy(id: id, theirs: theirs)
        }
    }

    @Test("the server's copy changed while the new version was on its way: the request that would replace it is refused, the new version goes beside it",
          arguments: kinds)
    func changedDuringTheUpload(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try NewVersionScene(kind, hold: .afterBytes(1 << 20))
            let downloaded = try scene.serverETag()
            let id = try scene.enqueueNewVersion(replacing: downloaded)
            try scene.session.startAgent()
            try scene.proxy.waitUntilHolding()
            let theirs = try scene.changeServerCopy()
            scene.proxy.release()
            try scene.session.waitForAll("completed", count: 1, timeout: 120)
            try scene.expectConflictedCopy(id: id, theirs: theirs)
        }
    }

    @Test("the server's copy changed after the last look, just before the request that would replace it: the server refuses it (a tagged If, If-Match) and the new version goes beside it",
          arguments: [(ServerKind.nextcloud, "MOVE", 9 << 20), (.nextcloud, "PUT", 3 << 20), (.referenceWebDAV, "MOVE", 3 << 20),
                      (.apache, "MOVE", 3 << 20), (.owncloud10, "PUT", 3 << 20)])
    func refusedByTheServer(_ kind: ServerKind, method: String, size: Int) async throws {
        try await offThePool {
            // Nextcloud: a file over 8 MiB goes chunked and its MOVE carries the tagged If; a
            // smaller one is one PUT with If-Match.
            let scene = try NewVersionScene(kind, hold: .atMethod(method), size: size)
            let id = try scene.enqueueNewVersion(replacing: try scene.serverETag())
            try scene.session.startAgent()
            try scene.proxy.waitUntilHolding()
            let theirs = try scene.changeServerCopy()
            scene.proxy.release()
            try scene.session.waitForAll("completed", count: 1, timeout: 120)
            try scene.expectConflictedCopy(id: id, theirs: theirs)
        }
    }

    @Test("a conflicted copy's name: the name, then the local time, before the extension")
    func conflictedName() {
        #expect(DownloadName.conflicted("report.odt", stamp: "2026-12-03 0715") == "report (conflicted copy 2026-12-03 0715).odt")
        #expect(DownloadName.conflicted("README", stamp: "2026-12-03 0715") == "README (conflicted copy 2026-12-03 0715)")
        var t = tm()
        t.tm_year = 126; t.tm_mon = 11; t.tm_mday = 3; t.tm_hour = 7; t.tm_min = 5; t.tm_isdst = -1
        #expect(DownloadName.stamp(mktime(&t)) == "2026-12-03 0705")
    }
}

/// One server of a kind behind a proxy (`ProxiedServer`), `/Documents/report.odt` on it
/// (as downloaded), and its edited version here, 3 MiB unless told.
struct NewVersionScene {
    let server: ProxiedServer
    let local: String
    var running: ServerKind.Running { server.running }
    var proxy: HoldingProxy { server.proxy }
    var session: AgentHarness { server.session }
    var dav: WebDAVClient { server.dav }

    init(_ kind: ServerKind, hold: HoldingProxy.Hold?, size: Int = 3 << 20) throws {
        server = try ProxiedServer(kind, hold: hold)
        try server.dav.makeFolders("/Documents")
        _ = try server.dav.put(.bytes(TestData.bytes(count: 200_000, seed: 1)), to: "/Documents/report.odt")
        local = try server.session.home.randomFile("Downloads/Local Drive/report.odt", size: size, seed: 2)
    }

    func onServer(_ name: String) -> String { running.tree + "/Documents/" + name }
    func listing() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: running.tree + "/Documents").sorted() }
    func serverETag() throws -> String { try #require(try dav.properties(of: "/Documents/report.odt").etag) }

    /// What a download-tracking agent would queue for the edited file.
    func enqueueNewVersion(replacing etag: String) throws -> Int64 {
        let store = try QueueStore(path: session.databasePath)
        let account = try #require(try store.account(named: "home"))
        let fingerprint = try FileFingerprint.of(LocalPath(local))
        return try store.enqueue([NewTransfer(direction: .upload, origin: .manual, accountID: account.id, localPath: LocalPath(local),
                                              remotePath: "/Documents/report.odt", bytesTotal: fingerprint.size,
                                              fingerprint: fingerprint, replacesETag: etag)])[0]
    }

    /// Someone changes the server's copy (straight to the server); its SHA-256.
    func changeServerCopy() throws -> String {
        let theirs = TestData.bytes(count: 150_000, seed: 3)
        _ = try dav.put(.bytes(theirs), to: "/Documents/report.odt")
        return try TestData.sha256(ofFile: onServer("report.odt"))
    }

    func expectConflictedCopy(id: Int64, theirs: String) throws {
        #expect(try TestData.sha256(ofFile: onServer("report.odt")) == theirs, "the server's copy keeps its change (\(running.address))")
        let names = try listing()
        let copy = try #require(names.first { $0.hasPrefix("report (conflicted copy ") && $0.hasSuffix(").odt") }, "\(names)")
        #expect(names.count == 2, "\(names)")
        #expect(try TestData.sha256(ofFile: onServer(copy)) == (try TestData.sha256(ofFile: local)))
        let row = try #require(try QueueStore(path: session.databasePath).transfer(id: id))
        #expect(row.remotePath == "/Documents/" + copy && row.newVersionOf == "/Documents/report.odt", "\(row.remotePath)")
        #expect(session.agentLog.contains("changed on the server since it was downloaded"), "\(session.agentLog.suffix(1500))")
    }
}
