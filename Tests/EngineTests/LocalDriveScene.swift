import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing
import Transport

/// A server of a kind with `/Documents/report.odt` (and two more files) on it, a person
/// with the account, and the agent running with a short settle window for Local Drive.
struct LocalDriveScene {
    let running: ServerKind.Running
    let session: AgentHarness
    let dav: WebDAVClient

    var localDrive: String { session.downloads }

    /// `pausedAt`: a crash window the agent's transfers wait at (`AgentHarness.pause(at:)`);
    /// `serverArguments` go to a reference server.
    init(_ kind: ServerKind, pausedAt: String? = nil, serverArguments: [String] = []) throws {
        running = try ServerKind.Running(kind, arguments: serverArguments)
        session = try AgentHarness()
        if let pausedAt { session.pause(at: pausedAt) }
        try session.writeConfig(agentConfig() + "[downloads]\ntrack_edits = yes\n")
        try session.addAccount(address: running.address, user: running.user, password: running.password)
        let account = try #require(try QueueStore(path: session.databasePath).account(named: "home"))
        dav = WebDAVClient(root: account.webdavURL, credentials: Credentials(username: running.user, password: running.password))
        try dav.makeFolders("/Documents")
        for (name, seed) in [("report.odt", 1), ("notes.txt", 2), ("old.odt", 3)] {
            _ = try dav.put(.bytes(TestData.bytes(count: 200_000, seed: UInt64(seed))), to: "/Documents/" + name)
        }
        try session.startAgent()
    }

    /// Downloads `path` and waits until it is in Local Drive; its local path.
    func download(_ path: String, arguments: [String] = []) throws -> String {
        let before = try session.items().count
        let r = try session.cli(["download"] + arguments + [path])
        guard r.status == 0 else { throw TestFailure("download failed (\(r.status)): \(r.stderr)") }
        try session.waitFor("the download of \(path)") { items in
            items.count == before + 1 && items.allSatisfy { $0["state"] as? String == "completed" }
        }
        let local = localDrive + "/" + String(path.split(separator: "/").last!)
        guard FileManager.default.fileExists(atPath: local) else { throw TestFailure("\(local) is not there") }
        return local
    }

    /// Restarts the agent with its downloads set to wait once their file is in place, their
    /// row not completed yet (the crash window `download-in-place`), until `releasePause`.
    func holdDownloadsInPlace() throws {
        session.stopAgent()
        session.pause(at: "download-in-place")
        try session.startAgent()
    }

    /// Downloads `path` with the agent's downloads held in place, and waits until it is.
    func downloadHeldInPlace(_ path: String) throws {
        let r = try session.cli(["download", path])
        guard r.status == 0 else { throw TestFailure("download failed (\(r.status)): \(r.stderr)") }
        try session.waitForAgentLog("paused at download-in-place")
    }

    /// Writes new bytes into the file in place, as a program saving it would.
    func overwrite(_ path: String, seed: UInt64) throws {
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("cannot open \(path) for writing") }
        defer { close(fd) }
        let bytes = TestData.bytes(count: 250_000 + Int(seed), seed: seed)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else { throw TestFailure("short write") }
    }

    /// Saves the file (`first`), and saves it again (`second`) while the first save's new
    /// version waits just before the request that makes its file (a scene paused at
    /// `upload-finishing`); once the watcher has seen the second save, the first goes on.
    func saveAgainWhileSent(_ path: String, first: UInt64, second: UInt64) throws {
        try overwrite(path, seed: first)
        try saveAgainOnceSending(path, seed: second)
    }

    /// Saves the file again (`seed`) once a save made before waits just before the request
    /// that makes its new version, and lets that go on once the watcher has seen it.
    func saveAgainOnceSending(_ path: String, seed second: UInt64) throws {
        try session.waitForAgentLog("paused at upload-finishing")
        try overwrite(path, seed: second)
        let changed = "\(LocalPath(path).lastComponent.display) changed; "
        try session.waitFor("the second save seen") { _ in session.agentLog.components(separatedBy: changed).count - 1 >= 2 }
        session.releasePause()
    }

    /// Pauses the queue, edits the file in place and waits for its new version to be queued;
    /// the SHA-256 of the edit.
    @discardableResult
    func editWhilePaused(_ path: String, seed: UInt64) throws -> String {
        guard try session.cli(["pause", "--all"]).status == 0 else { throw TestFailure("pause --all failed") }
        try overwrite(path, seed: seed)
        try session.waitFor("the new version in the queue") { items in
            items.contains { $0["direction"] as? String == "upload" && $0["state"] as? String == "queued" }
        }
        return try TestData.sha256(ofFile: path)
    }

    /// Downloads report.odt and notes.txt, pauses the queue and edits both, and waits for
    /// both edits in the queue: the two local paths and the SHA-256 of each edit.
    func twoEditsWaiting(seeds: (UInt64, UInt64)) throws -> (report: String, notes: String, reportEdit: String, notesEdit: String) {
        let report = try download("/Documents/report.odt")
        let notes = try download("/Documents/notes.txt")
        let reportEdit = try editWhilePaused(report, seed: seeds.0)
        try overwrite(notes, seed: seeds.1)
        try session.waitFor("both edits queued") { items in items.filter { $0["direction"] as? String == "upload" }.count == 2 }
        return (report, notes, reportEdit, try TestData.sha256(ofFile: notes))
    }

    /// The upload rows (new versions) of the queue.
    func uploads() throws -> [Transfer] {
        try QueueStore(path: session.databasePath).transfers().filter { $0.direction == .upload }
    }

    /// Waits until `count` uploads have completed.
    func waitForUploads(_ count: Int, timeout: Double = 90) throws {
        try session.waitFor("\(count) new version(s) sent", timeout: timeout) { items in
            items.filter { $0["direction"] as? String == "upload" && $0["state"] as? String == "completed" }.count >= count
        }
    }

    func serverSHA(_ name: String) throws -> String { try TestData.sha256(ofFile: running.tree + "/Documents/" + name) }
    func listing() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: running.tree + "/Documents").sorted() }
}
