import Foundation
import Glibc
import TestSupport

/// Instant upload as a person meets it: the reference server, an account on it, the real
/// agent, and rules added with `instant-upload watch add`; what arrived is read from the
/// server's tree, the queue and `watch list`.
final class InstantUploadScene: @unchecked Sendable {
    // Sendable by construction: used from the one test that made it.
    let server: ReferenceServer
    let session: AgentHarness
    /// Where the watched folders and everything else of the test live.
    let files: TemporaryFolder

    /// `face`: tus beside WebDAV, or a plain WebDAV server (uploads by PUT), added as a
    /// person would, by its address.
    init(serverFolders: [String] = ["Photos"], config: String = "", extraEnvironment: [String: String] = [:],
         face: ReferenceServer.Face = .tus) throws {
        server = try ReferenceServer(face: face)
        for folder in serverFolders { try server.makeFolder(folder) }
        session = try AgentHarness(extraEnvironment: extraEnvironment)
        try session.writeConfig("[agent]\nautostart = false\n\n[transfers]\nuploads = 4\n" + config)
        if face == .tus { try session.addAccount(server) } else { try session.addAccount(address: server.address()) }
        files = TemporaryFolder("iu-camera")
    }

    /// The scene most tests start from: the agent running, and the rule `camera` watching
    /// the folder `Camera` (made empty) into `/Photos`.
    static func watchingCamera() throws -> InstantUploadScene {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera"))
        try scene.session.startAgent()
        try scene.addRule("Camera")
        try scene.waitWatching("camera")
        return scene
    }

    /// A path inside the test's folder.
    func path(_ relative: String) -> String { files.path + "/" + relative }

    /// `watch add FOLDER --to REMOTE ARGS...`, which must succeed. A short settle window
    /// keeps the tests quick.
    @discardableResult
    func addRule(_ folder: String, to remote: String = "/Photos", _ arguments: [String] = [], settle: Int = 1) throws -> Shell.Result {
        let r = try session.cli(["watch", "add", path(folder), "--to", remote, "--settle", String(settle)] + arguments)
        guard r.status == 0 else { throw TestFailure("watch add failed (\(r.status)): \(r.stderr)") }
        return r
    }

    /// `watch list --json`, decoded.
    func rules() throws -> [[String: Any]] {
        let r = try session.cli(["watch", "list", "--json"])
        guard let list = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] else {
            throw TestFailure("watch list --json is not a list (\(r.status)): \(r.stdout.prefix(300)) \(r.stderr)")
        }
        return list
    }

    func rule(_ id: String) throws -> [String: Any] {
        guard let rule = try rules().first(where: { $0["id"] as? String == id }) else { throw TestFailure("no rule \(id) in watch list") }
        return rule
    }

    /// Waits until `watch list` says the rule watches its whole folder.
    func waitWatching(_ id: String, timeout: Double = 30) throws {
        try until("rule \(id) watching", timeout: timeout) { try self.rule(id)["state"] as? String == "watching" }
    }

    /// Waits until `condition` holds, or fails with the agent's log.
    func until(_ what: String, timeout: Double = 60, every: Double = 0.2, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if try condition() { return }
            if Date() >= deadline { break }
            usleep(useconds_t(every * 1_000_000))
        }
        throw TestFailure("timed out after \(Int(timeout)) s waiting for \(what); agent log:\n\(session.agentLog.suffix(4000))")
    }

    /// `status --json`, decoded.
    func status() throws -> [String: Any] {
        let r = try session.cli(["status", "--json"])
        guard let status = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("status --json is not an object: \(r.stdout.prefix(300)) \(r.stderr)")
        }
        return status
    }

    /// Waits until `count` uploads completed and nothing else is queued, moving or retrying.
    func waitUploaded(_ count: Int, timeout: Double = 120) throws {
        var last: [String: Any] = [:]
        do {
            try until("\(count) uploads completed", timeout: timeout, every: 0.5) {
                last = try status()
                return last["completed"] as? Int == count && last["total"] as? Int == count
            }
        } catch {
            throw TestFailure("\(error)\nlast status: \(last)")
        }
    }

    /// Every queue item, by remote path (a path queued twice shows as two items).
    func itemsByTarget() throws -> [String: [[String: Any]]] {
        Dictionary(grouping: try session.items(), by: { $0["target"] as? String ?? "" })
    }

    /// The files below `folder` in the account's tree on the server, as paths relative to it.
    func serverFiles(_ folder: String = "Photos") -> [String] {
        let root = server.tree() + "/" + folder
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        return walker.compactMap { $0 as? String }.filter { (try? FileManager.default.attributesOfItem(atPath: root + "/" + $0)[.type] as? FileAttributeType) == .typeRegular }.sorted()
    }

    /// How often the server completed an upload at each path (`Photos/IMG_1.jpg`).
    func completions() throws -> [String: Int] {
        guard let all = try server.stats()["completions"] as? [String: [String: Int]] else {
            throw TestFailure("the reference server does not count completions per path")
        }
        return all["alice"] ?? [:]
    }

    /// Checks that every one of `names` (paths below `/Photos` on the server) was queued
    /// once, completed on the server once and is byte-identical to `local(name)`.
    func expectEachOnce(_ names: [String], remoteFolder: String = "Photos", local: (String) -> String) throws {
        let byTarget = try itemsByTarget()
        let twice = byTarget.filter { $0.value.count > 1 }.keys.sorted()
        guard twice.isEmpty else { throw TestFailure("queued more than once: \(twice.prefix(10))") }
        let onServer = Set(serverFiles(remoteFolder))
        for name in names {
            guard byTarget["/\(remoteFolder)/\(name)"]?.count == 1 else { throw TestFailure("\(name) was not queued exactly once") }
            guard onServer.contains(name) else { throw TestFailure("\(name) is not on the server") }
            let there = try TestData.sha256(ofFile: server.tree() + "/\(remoteFolder)/" + name)
            guard there == (try TestData.sha256(ofFile: local(name))) else { throw TestFailure("\(name) on the server differs from the file") }
        }
        let completions = try completions()
        let repeated = completions.filter { $0.value != 1 }
        guard repeated.isEmpty else { throw TestFailure("completed more than once on the server: \(repeated.prefix(10))") }
        for name in names where completions["\(remoteFolder)/\(name)"] != 1 {
            throw TestFailure("\(name) did not complete on the server exactly once (\(completions["\(remoteFolder)/\(name)"] ?? 0) times)")
        }
    }
}

/// Files written the way cameras and copy tools write them.
enum Camera {
    /// A distinct photo (its comment differs) taken on `date` (EXIF form).
    static func photo(_ index: Int, date: String = "2024:03:15 10:00:00") -> [UInt8] {
        MediaFiles.photo(date, comment: "picture \(index)")
    }

    /// Writes `bytes` at `path` in one open, write, close (one `IN_CLOSE_WRITE`), making
    /// its folder if needed.
    static func write(_ path: String, _ bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0, errno == ENOENT {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            return try write(path, bytes)
        }
        guard fd >= 0 else { throw TestFailure("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else { throw TestFailure("cannot write \(path)") }
    }

    static func move(_ from: String, _ to: String) throws {
        guard rename(from, to) == 0 else { throw TestFailure("cannot move \(from) to \(to): \(String(cString: strerror(errno)))") }
    }
}
