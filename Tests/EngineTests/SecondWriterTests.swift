import Foundation
import Glibc
import Queue
import TestSupport
import Testing

/// Other people and programs save files into the same server folders while the agent
/// works. The request that makes an upload's file never replaces one that appeared since
/// the agent looked, on every kind of server, and a kill inside that request is recognised
/// afterwards instead of sending a second copy.
@Suite("Nothing on the server is replaced, nothing sent twice")
struct SecondWriterTests {
    static let folder = "Shared"
    static let name = "IMG_0001.jpg"
    static let size = 3 << 20
    /// Nextcloud sends a file of up to 8 MiB as one PUT (`NextcloudSmallFileTests`): here its
    /// file is larger, so that its chunked upload and the MOVE that makes the file are tested.
    static let nextcloudChunked = 9 << 20

    /// Every protocol and its finishing step: tus's last chunk (tus beside WebDAV, oCIS),
    /// Nextcloud's MOVE, a direct PUT (ownCloud 10), a PUT to a temporary and its MOVE (the
    /// reference server's plain WebDAV face, Apache mod_dav, rclone).
    static let kinds: [ServerKind] = [.tusAndWebDAV, .ocis, .nextcloud, .owncloud10, .referenceWebDAV, .apache, .rclone]

    /// The size of the photo sent to a server of this kind.
    static func size(for kind: ServerKind) -> Int { kind == .nextcloud ? nextcloudChunked : size }

    @Test("a different file saved at the target while the upload runs survives; ours completes as name (1).ext, and its bytes went once where the protocol can finish under another name",
          arguments: kinds)
    func differentFileSavedMeanwhile(_ kind: ServerKind) async throws {
        try await offThePool {
            // A direct PUT is only checked by the server when it starts (the server writes the
            // body where it will stay), so the other file comes before the PUT reaches it;
            // everywhere else it comes while the body is part way.
            let scene = try SecondWriterScene(kind, hold: kind == .owncloud10 ? .atMethod("PUT") : .afterBytes(1 << 20),
                                              size: Self.size(for: kind))
            try scene.session.startAgent()
            try scene.proxy.waitUntilHolding()
            let theirs = try scene.saveTheirs()
            scene.proxy.release()
            try scene.session.waitForAll("completed", count: 1, timeout: 120)

            #expect(try TestData.sha256(ofFile: scene.onServer(Self.name)) == theirs, "the file saved meanwhile is untouched")
            #expect(try TestData.sha256(ofFile: scene.onServer("IMG_0001 (1).jpg")) == (try TestData.sha256(ofFile: scene.file)))
            #expect(try scene.listing() == ["IMG_0001 (1).jpg", Self.name], "nothing else: no temporary, no third copy")
            let row = try #require(try scene.session.items().first)
            #expect(row["target"] as? String == "/\(Self.folder)/IMG_0001 (1).jpg", "the row names where it went: \(row)")

            // What went over the wire: the file once where the finishing request can name
            // another file (a MOVE), twice where it cannot: tus's last chunk, and a direct PUT,
            // whose refused body the server discarded.
            // A refused direct PUT's body goes only as far as it got before the refusal came
            // back (libcurl stops sending a body once the server has answered).
            let sent = try scene.proxy.bytesSent()
            let expected = [.tusAndWebDAV, .ocis, .owncloud10].contains(kind) ? 2 * scene.size : scene.size
            let least = kind == .owncloud10 ? scene.size : expected
            #expect(sent >= least && sent < expected + Self.size / 2, "\(sent) bytes sent for a \(scene.size)-byte file")
            if [.tusAndWebDAV, .ocis].contains(kind) {
                #expect(scene.session.agentLog.contains("tus cannot finish it under another name, so it is sent again as /Shared/IMG_0001 (1).jpg"),
                        "\(scene.session.agentLog.suffix(2000))")
            }
        }
    }

    @Test("killed inside the request that makes the file: the restarted agent finds its file there and completes, one file on the server, nothing sent again",
          arguments: [ServerKind.tusAndWebDAV, .nextcloud, .owncloud10, .referenceWebDAV])
    func killedInsideTheFinishingRequest(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try SecondWriterScene(kind, hold: nil, size: Self.size(for: kind))
            try scene.session.killAgent(at: "upload-made")
            let row = try #require(try QueueStore(path: scene.session.databasePath).transfer(id: 1))
            #expect(row.state == .inProgress && row.finishing, "the row recorded what it was making: \(row.state) \(row.finishing)")
            let before = try scene.proxy.bytesSent()

            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 60)
            #expect(try scene.listing() == [Self.name], "one file, no (1)")
            #expect(try TestData.sha256(ofFile: scene.onServer(Self.name)) == (try TestData.sha256(ofFile: scene.file)))
            let after = try scene.proxy.bytesSent()
            #expect(after - before < 64 << 10, "no body sent again: \(after - before) bytes after the restart")
            #expect(scene.session.agentLog.contains("is this upload's file, made before the agent stopped"), "\(scene.session.agentLog.suffix(2000))")
            let stats = try #require(try scene.running.reference?.stats())
            let path = "\(Self.folder)/\(Self.name)"
            let made = switch kind {
            case .tusAndWebDAV: ((stats["completions"] as? [String: Any])?["alice"] as? [String: Int])?[path]
            case .nextcloud: (stats["assemblies"] as? [String: Int])?[path]
            case .owncloud10: (stats["puts"] as? [String: Int])?[path]
            default: stats["moves"] as? Int
            }
            #expect(made == 1, "the file was made once: \(stats)")
            let done = try #require(try QueueStore(path: scene.session.databasePath).transfer(id: 1))
            #expect(done.verifiedAt != nil && !done.finishing, "the server showed the file")
        }
    }

    @Test("killed after the server confirmed the last chunk, before the row did: the restarted agent sends nothing again, joins the chunks, and its row says the run went on from the whole file")
    func killedBeforeTheCheckpoint() async throws {
        try await offThePool {
            let scene = try SecondWriterScene(.nextcloud, hold: nil, size: Self.size(for: .nextcloud))
            try scene.session.killAgent(at: "upload-confirmed")
            let killed = try #require(try QueueStore(path: scene.session.databasePath).transfer(id: 1))
            #expect(killed.checkpoint.offset < Int64(scene.size), "the row had not recorded the last chunk")
            let before = try scene.proxy.bytesSent()

            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 60)
            #expect(try TestData.sha256(ofFile: scene.onServer(Self.name)) == (try TestData.sha256(ofFile: scene.file)))
            #expect(try scene.proxy.bytesSent() - before < 64 << 10, "no chunk sent again")
            let done = try #require(try QueueStore(path: scene.session.databasePath).transfer(id: 1))
            #expect(done.counters.resumedAt == Int64(scene.size) && done.counters.bytesRead == Int64(scene.size) - killed.checkpoint.offset,
                    "the run went on from the whole file, reading only what its checkpoint lacked: \(done.counters)")
        }
    }

    @Test("killed just before the request that makes the file, while someone saves a file of the same size at the name on a server without checksums: theirs is not taken for ours",
          arguments: [ServerKind.apache, .owncloud10])
    func sameSizeFileIsNotTakenForOurs(_ kind: ServerKind) async throws {
        try await offThePool {
            // Apache's temporary is still there, so the MOVE did not happen; ownCloud 10's direct
            // PUT leaves nothing to ask, so the file at the name is read back.
            let scene = try SecondWriterScene(kind, hold: nil)
            try scene.session.killAgent(at: "upload-finishing")
            try scene.expectTheirsKeptAndOursBeside(try scene.saveTheirs())
        }
    }

    @Test("killed just before the request that makes the file, then the upload expires on the server and someone saves a file of the same size at the name, without a checksum: the upload being gone is not taken for ours having been made",
          arguments: [ServerKind.nextcloud, .ocis, .tusAndWebDAV])
    func expiredUploadIsNotTakenForOurs(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try SecondWriterScene(kind, hold: nil, size: Self.size(for: kind))
            try scene.session.killAgent(at: "upload-finishing")
            let upload = try #require(try QueueStore(path: scene.session.databasePath).transfer(id: 1)?.uploadURL)
            if kind == .nextcloud {
                try #require(scene.running.reference).expireUploads()
            } else {
                // As the server does when an unfinished upload's time runs out.
                let r = try Shell.capture("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "DELETE", "-H", "Tus-Resumable: 1.0.0",
                                                            "-u", "\(scene.running.user):\(scene.running.password)", upload])
                try #require(r.stdout == "204", "the upload's DELETE answered \(r.stdout): \(r.stderr)")
            }
            try scene.expectTheirsKeptAndOursBeside(try scene.saveTheirs())
        }
    }

    @Test("the target folder renamed on the server while the upload waits to become the file (its temporary moved away with it): the upload goes again into the folder made anew, and completes",
          arguments: [ServerKind.referenceWebDAV, .apache])
    func folderRenamedBeforeTheMove(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try SecondWriterScene(kind, hold: nil)
            scene.session.pause(at: "upload-finishing")
            try scene.session.startAgent()
            try scene.session.waitForAgentLog("paused at upload-finishing")
            let renamed = scene.running.tree + "/Renamed"
            #expect(rename(scene.running.tree + "/" + Self.folder, renamed) == 0)
            scene.session.releasePause()
            try scene.session.waitForAll("completed", count: 1, timeout: 60)
            #expect(try TestData.sha256(ofFile: scene.onServer(Self.name)) == (try TestData.sha256(ofFile: scene.file)))
            // The temporary went with the folder; the agent cannot know where, and says what it is.
            let left = try FileManager.default.contentsOfDirectory(atPath: renamed)
            let temporary = try #require(left.first { $0.hasPrefix(".") }, "\(left)")
            #expect(scene.session.agentLog.contains("its temporary \(temporary) is no longer in /\(Self.folder) on the server"),
                    "\(scene.session.agentLog.suffix(2000))")
        }
    }

    @Test("the folder removed on the server just after a photo went into it: the next photo, within the time its listing is used, makes it again and completes",
          arguments: [ServerKind.ocis, .tusAndWebDAV, .nextcloud, .referenceWebDAV])
    func folderRemovedBetweenTwoPhotos(_ kind: ServerKind) async throws {
        try await offThePool {
            let scene = try SecondWriterScene(kind, hold: nil, size: 100_000)
            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 60)
            try FileManager.default.removeItem(atPath: scene.running.tree + "/" + Self.folder)
            let next = try scene.session.home.randomFile("pictures/IMG_0002.jpg", size: 100_000, seed: 42)
            #expect(try scene.session.cli(["upload", "--to", "/" + Self.folder, next]).status == 0)
            try scene.session.waitForAll("completed", count: 2, timeout: 60)
            #expect(try TestData.sha256(ofFile: scene.onServer("IMG_0002.jpg")) == (try TestData.sha256(ofFile: next)))
        }
    }

    @Test("a file saved into the folder after the agent listed it, at the name of the next photo of the batch: theirs survives, ours completes as name (1).ext",
          arguments: kinds)
    func savedAfterTheListing(_ kind: ServerKind) async throws {
        try await offThePool {
            // The first photo lists the folder; the listing is used for the next one, which
            // it does not show taken.
            let scene = try SecondWriterScene(kind, hold: nil, size: Self.size(for: kind))
            try scene.session.startAgent()
            try scene.session.waitForAll("completed", count: 1, timeout: 60)
            let next = "IMG_0002.jpg"
            let theirs = try scene.saveTheirs(as: next)
            let ours = try scene.session.home.randomFile("pictures/" + next, size: scene.size, seed: 42)
            #expect(try scene.session.cli(["upload", "--to", "/" + Self.folder, ours]).status == 0)
            try scene.session.waitForAll("completed", count: 2, timeout: 120)

            #expect(try TestData.sha256(ofFile: scene.onServer(next)) == theirs, "the file saved meanwhile is untouched")
            #expect(try TestData.sha256(ofFile: scene.onServer("IMG_0002 (1).jpg")) == (try TestData.sha256(ofFile: ours)))
            #expect(try scene.listing() == [Self.name, "IMG_0002 (1).jpg", next], "nothing else: no temporary, no third copy")
            // The listing the first photo made was used: the name was not looked at before the
            // upload (which would have found theirs); the upload's own refusing request did.
            #expect(!scene.session.agentLog.contains("IMG_0002.jpg is taken on the server"), "\(scene.session.agentLog.suffix(2000))")
        }
    }
}

/// One server of a kind behind a holding proxy (`ProxiedServer`), and one photo (3 MiB
/// unless told) queued for `/Shared`.
struct SecondWriterScene {
    let server: ProxiedServer
    let file: String
    let size: Int
    var running: ServerKind.Running { server.running }
    var proxy: HoldingProxy { server.proxy }
    var session: AgentHarness { server.session }

    init(_ kind: ServerKind, hold: HoldingProxy.Hold?, size: Int = SecondWriterTests.size) throws {
        server = try ProxiedServer(kind, hold: hold)
        self.size = size
        try FileManager.default.createDirectory(atPath: server.running.tree + "/" + SecondWriterTests.folder, withIntermediateDirectories: true)
        chmod(server.running.tree + "/" + SecondWriterTests.folder, 0o777)
        file = try server.session.home.randomFile("pictures/" + SecondWriterTests.name, size: size, seed: 41)
        let r = try server.session.cli(["upload", "--to", "/" + SecondWriterTests.folder, file])
        guard r.status == 0 else { throw TestFailure("upload failed (\(r.status)): \(r.stderr)") }
    }

    func onServer(_ name: String) -> String { running.tree + "/" + SecondWriterTests.folder + "/" + name }

    func listing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: running.tree + "/" + SecondWriterTests.folder).sorted()
    }

    /// Another client saves a different file of the same size at the upload's name, with a
    /// PUT straight to the server; its SHA-256.
    func saveTheirs(as name: String = SecondWriterTests.name) throws -> String {
        let theirs = session.home.path + "/theirs.jpg"
        try Data(TestData.bytes(count: size, seed: 999)).write(to: URL(fileURLWithPath: theirs))
        let url = server.directRoot + SecondWriterTests.folder + "/" + name
        let r = try Shell.capture("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-u", "\(running.user):\(running.password)",
                                                    "-T", theirs, url])
        guard ["201", "204", "200"].contains(r.stdout) else { throw TestFailure("their PUT to \(url) answered \(r.stdout): \(r.stderr)") }
        return try TestData.sha256(ofFile: theirs)
    }

    /// Starts the agent again and waits for the upload: the file saved at the name (`theirs`,
    /// its SHA-256) is untouched, and ours is beside it as `IMG_0001 (1).jpg`, nothing else.
    func expectTheirsKeptAndOursBeside(_ theirs: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try session.startAgent()
        try session.waitForAll("completed", count: 1, timeout: 60)
        let name = SecondWriterTests.name
        #expect(try TestData.sha256(ofFile: onServer(name)) == theirs, "theirs is untouched", sourceLocation: sourceLocation)
        #expect(try TestData.sha256(ofFile: onServer("IMG_0001 (1).jpg")) == (try TestData.sha256(ofFile: file)),
                sourceLocation: sourceLocation)
        #expect(try listing() == ["IMG_0001 (1).jpg", name], sourceLocation: sourceLocation)
    }
}
