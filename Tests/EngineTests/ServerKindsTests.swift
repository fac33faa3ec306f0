import Foundation
import Glibc
import Queue
import TestSupport
import Testing

/// The servers people run, each started for real: the reference server's Nextcloud,
/// ownCloud 10, ownCloud Infinite Scale, tus + WebDAV and plain WebDAV faces, Apache httpd
/// mod_dav and `rclone serve webdav`.
enum ServerKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case nextcloud, owncloud10, ocis, tusAndWebDAV, referenceWebDAV, apache, rclone

    var testDescription: String { rawValue }

    /// What `account list --json` says after discovery.
    var expected: (kind: String, upload: String) {
        switch self {
        case .nextcloud: ("nextcloud", "nextcloud-chunking")
        case .owncloud10: ("owncloud", "webdav-put")
        case .ocis: ("owncloud", "tus")
        case .tusAndWebDAV: ("webdav", "tus")
        case .referenceWebDAV, .apache, .rclone: ("webdav", "webdav-put")
        }
    }

    /// The product and version `account list` shows, as status.php announces them; nil for
    /// servers without one (shown as "WebDAV server").
    var announced: (product: String, version: String)? {
        switch self {
        case .nextcloud: ("Nextcloud", "28.0.4")
        case .owncloud10: ("ownCloud", "10.13.4")
        // Its own version (`productversion`), not the ownCloud 10 it answers like (`versionstring` 10.11.0).
        case .ocis: ("Infinite Scale", "5.0.5")
        case .tusAndWebDAV, .referenceWebDAV, .apache, .rclone: nil
        }
    }

    /// Where a file's mtime on the server comes from.
    enum MtimeOnServer { case local, arrival }

    /// Nextcloud, ownCloud and oCIS set it from `X-OC-Mtime`. The others keep the time the
    /// file arrived: the reference server's tus and plain-WebDAV faces as most WebDAV servers
    /// do, Apache httpd 2.4's mod_dav (it has no such header) and Debian 12's rclone 1.60
    /// (its `serve webdav` ignores the header the agent sends with every PUT).
    var mtimeOnServer: MtimeOnServer {
        switch self {
        case .nextcloud, .owncloud10, .ocis: .local
        case .tusAndWebDAV, .referenceWebDAV, .apache, .rclone: .arrival
        }
    }

    /// A running server of this kind, the address a person would type, and the account's files on disk.
    final class Running: @unchecked Sendable {
        // Sendable by construction: set in init, only read afterwards.
        let reference: ReferenceServer?
        let foreign: ForeignWebDAVServer?
        let address: String
        let user: String
        let password: String
        let tree: String

        init(_ kind: ServerKind, arguments: [String] = []) throws {
            switch kind {
            case .apache, .rclone:
                let server = try ForeignWebDAVServer(kind == .apache ? .apache : .rclone)
                (reference, foreign) = (nil, server)
                (address, user, password, tree) = (server.url, server.user, server.password, server.root)
            default:
                let (face, extra): (ReferenceServer.Face, [String]) = switch kind {
                case .nextcloud: (.nextcloud, ["--path-prefix", "/nextcloud"])
                case .owncloud10: (.nextcloud, ["--product", "owncloud"])
                case .ocis: (.nextcloud, ["--product", "ocis"])
                case .tusAndWebDAV: (.tus, [])
                default: (.webdav, [])
                }
                let server = try ReferenceServer(arguments: extra + arguments, face: face)
                (reference, foreign) = (server, nil)
                address = server.address(prefix: kind == .nextcloud ? "/nextcloud" : "")
                (user, password, tree) = ("alice", "wonderland", server.tree())
            }
        }
    }
}

@Suite("Every kind of server, end to end", .serialized)
struct ServerKindsTests {
    static let folder = "/Fotos 2024/Ünïcødé #1"
    static let names = ["IMG 0001.jpg", "naïve #2 100%.mov", "日本 & Meer.txt", "empty #0.txt"]

    @Test("account add URL finds the protocol; 3 files (one over 100 MiB) and an empty one, with spaces, unicode and #, arrive identical in folders that did not exist, with the local mtime where the server honours X-OC-Mtime and the time they arrived where it does not",
          arguments: ServerKind.allCases)
    func endToEnd(_ kind: ServerKind) async throws {
        try await offThePool {
            let server = try ServerKind.Running(kind)
            let s = try AgentHarness()
            // 1 MiB chunks asked for: Nextcloud's are 5 MiB at least all the same (its server
            // refuses to assemble smaller ones but the last).
            try s.writeConfig("[agent]\nautostart = false\n[transfers]\nchunk_size_mb = 1\n")
            try s.addAccount(address: server.address, user: server.user, password: server.password)
            // account list and account list --json name the server's kind, product, version and upload protocol.
            try Self.expectListed(kind, s, user: server.user)
            if kind == .ocis {
                let stored = try QueueStore(path: s.databasePath).account(named: "home")
                #expect(stored?.server.maxChunkSize == 10_000_000 && stored?.server.createsTusInFolders == true)
            }

            let sizes = [300_001, (100 << 20) + 3, 4_097, 0]
            var files: [String] = []
            for (i, name) in Self.names.enumerated() {
                let path = try s.home.randomFile("pictures/\(name)", size: sizes[i], seed: UInt64(20 + i))
                var times = [timespec(tv_sec: 1_500_000_000 + i, tv_nsec: 0), timespec(tv_sec: 1_500_000_000 + i, tv_nsec: 0)]
                #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
                files.append(path)
            }
            #expect(try s.cli(["upload", "--to", Self.folder] + files).status == 0)
            let sent = time(nil)
            try s.startAgent()
            try s.waitForAll("completed", count: files.count, timeout: 240)
            let arrived = time(nil)

            let disk = server.tree + Self.folder
            for (i, name) in Self.names.enumerated() {
                #expect(try TestData.sha256(ofFile: disk + "/" + name) == (try TestData.sha256(ofFile: files[i])), "\(name)")
                var st = stat()
                #expect(stat(disk + "/" + name, &st) == 0)
                switch kind.mtimeOnServer {
                case .local:
                    #expect(st.st_mtim.tv_sec == 1_500_000_000 + i, "\(name): mtime \(st.st_mtim.tv_sec)")
                case .arrival:
                    // Whole seconds on disk (rclone's, Apache's): a second of slack either side.
                    #expect((sent - 1)...(arrived + 1) ~= st.st_mtim.tv_sec,
                            "\(name): mtime \(st.st_mtim.tv_sec), sent from \(sent), all arrived by \(arrived)")
                }
            }
            let stored = try FileManager.default.contentsOfDirectory(atPath: disk).sorted()
            #expect(stored == Self.names.sorted(), "nothing else (no temporary, no copy) in the folder")
            if let reference = server.reference { try Self.expectWayIn(kind, stats: try reference.stats()) }
        }
    }

    /// The one account, as both forms of `account list` show it.
    static func expectListed(_ kind: ServerKind, _ s: AgentHarness, user: String) throws {
        let json = try s.cli(["account", "list", "--json"])
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]], "\(json.stdout)")
        let account = try #require(listed.count == 1 ? listed.first : nil, "\(json.stdout)")
        #expect(account["server_kind"] as? String == kind.expected.kind, "\(json.stdout)")
        #expect(account["upload_protocol"] as? String == kind.expected.upload, "\(json.stdout)")
        #expect(account["server_product"] as? String == kind.announced?.product, "\(json.stdout)")
        #expect(account["server_version"] as? String == kind.announced?.version, "\(json.stdout)")
        if kind.announced == nil {
            #expect(account["server_product"] is NSNull && account["server_version"] is NSNull, "present as null: \(json.stdout)")
        }

        let human = try s.cli(["account", "list"])
        #expect(human.status == 0)
        let fields = human.stdout.split(separator: "\n").first.map { $0.split(separator: "\t").map(String.init) } ?? []
        let server = kind.announced.map { "\($0.product) \($0.version)" } ?? "WebDAV server"
        #expect(Array(fields.prefix(4)) == ["home", user, server, kind.expected.upload], "\(human.stdout)")
    }

    /// What the reference server counted shows each file went in once, by the protocol discovery chose.
    static func expectWayIn(_ kind: ServerKind, stats: [String: Any]) throws {
        let paths = names.map { String(folder.dropFirst()) + "/" + $0 }
        let puts = stats["puts"] as? [String: Int] ?? [:]
        switch kind {
        case .nextcloud:
            // The 100 MiB file: chunks and one MOVE. The small ones (up to 8 MiB) and the empty
            // one: one PUT each, straight to the name, as Nextcloud's desktop client sends them.
            let assemblies = stats["assemblies"] as? [String: Int] ?? [:]
            #expect(assemblies == [paths[1]: 1], "\(assemblies)")
            #expect(puts.filter { !$0.key.hasPrefix("uploads/") } == [paths[0]: 1, paths[2]: 1, paths[3]: 1], "\(puts)")
        case .ocis, .tusAndWebDAV:
            let completions = (stats["completions"] as? [String: Any])?["alice"] as? [String: Int] ?? [:]
            #expect(completions == Dictionary(uniqueKeysWithValues: paths.map { ($0, 1) }), "\(completions)")
        case .owncloud10:
            #expect(puts == Dictionary(uniqueKeysWithValues: paths.map { ($0, 1) }), "straight to the name: \(puts)")
        case .referenceWebDAV:
            #expect(puts.count == 4 && puts.keys.allSatisfy { $0.contains("/.") && $0.hasSuffix(".part") }, "through temporaries: \(puts)")
            #expect(stats["moves"] as? Int == 4)
        case .apache, .rclone:
            break
        }
    }
}
