import Foundation
import Glibc
import TestSupport
import Testing

/// `share-to` with what file managers pass, end to end through the real binaries to the
/// reference server.
@Suite("share-to with file managers' arguments")
struct ShareToTests {
    /// A `%U` argument: `file://` and every byte outside RFC 3986's unreserved set escaped, as GLib does.
    static func uri(_ path: [UInt8]) -> String {
        "file://" + path.map { byte -> String in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "/"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                return String(UnicodeScalar(byte))
            default:
                return String(format: "%%%02X", byte)
            }
        }.joined()
    }

    @Test("file URIs with spaces, %, #, unicode, a newline and bytes that are not UTF-8 arrive under the right names")
    func uriNamesRoundTrip() throws {
        let server = try ReferenceServer()
        try server.makeFolder("U")
        let session = try AgentHarness()
        try session.addAccount(server)
        let folder = Array((session.home.path + "/desk/").utf8)
        try FileManager.default.createDirectory(atPath: session.home.path + "/desk", withIntermediateDirectories: true)
        let names: [([UInt8], String)] = [
            (Array("with space.txt".utf8), "with space.txt"),
            (Array("100%.txt".utf8), "100%.txt"),
            (Array("#hash #2.txt".utf8), "#hash #2.txt"),
            (Array("ünïcødé 日本.txt".utf8), "ünïcødé 日本.txt"),
            (Array("new\nline.txt".utf8), "new\nline.txt"),
            // Not UTF-8: the server can only hold text, so the byte becomes U+FFFD, as with `upload`.
            (Array("caf".utf8) + [0xe9] + Array(".txt".utf8), "caf\u{FFFD}.txt"),
        ]
        var arguments = ["--to", "/U"]
        for (index, (name, _)) in names.enumerated() {
            try writeFile(folder + name, contents: Array("content \(index)".utf8))
            arguments.append(Self.uri(folder + name))
        }
        let r = try session.shareTo(arguments)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("queued 6 files for home:/U"), "\(r.stdout)")
        try session.startAgent()
        try session.waitForAll("completed", count: names.count)
        for (index, (_, stored)) in names.enumerated() {
            let path = server.tree() + "/U/" + stored
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "content \(index)", "\(stored) on the server")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/U").count == names.count)
    }

    @Test("a URI on another computer or another scheme is refused in words; the local ones still go; exit 1")
    func foreignURIs() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        let good = try session.home.file("desk/good.txt", bytes: [1])
        let r = try session.shareTo(["--to", "/X", "file://nas.example.org/share/a.jpg", "sftp://host/home/me/b.jpg", Self.uri(Array(good.utf8))])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("not queued: file://nas.example.org/share/a.jpg: is on another computer (nas.example.org)"), "\(r.stderr)")
        #expect(r.stderr.contains("not queued: sftp://host/home/me/b.jpg: is not a file on this computer"), "\(r.stderr)")
        let items = try session.items()
        #expect(items.map { $0["source"] as? String } == [good])
    }

    @Test("a folder given to share-to is queued with its structure; a FIFO inside it is named and skipped")
    func folderWithStructure() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        try session.home.file("desk/Album/a.jpg", bytes: [1])
        try session.home.file("desk/Album/2024/b.jpg", bytes: [2])
        #expect(mkfifo(session.home.path + "/desk/Album/pipe", 0o644) == 0)
        let r = try session.shareTo(["--to", "/Photos", Self.uri(Array((session.home.path + "/desk/Album").utf8))])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("Album/pipe: is a pipe (FIFO)"), "\(r.stderr)")
        let targets = try session.items().compactMap { $0["target"] as? String }
        #expect(targets == ["/Photos/Album/2024/b.jpg", "/Photos/Album/a.jpg"])
    }

    @Test("share-to with 500 files queues them all in one go, origin share, under the right names")
    func fiveHundred() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        var arguments = ["--to", "/Many"]
        for i in 0..<500 { arguments.append(try session.home.file("many/f\(i).jpg", bytes: [UInt8(i % 256)])) }
        let r = try session.shareTo(arguments)
        #expect(r.status == 0, "\(r.stderr)")
        let items = try session.items()
        #expect(items.count == 500)
        #expect(Set(items.compactMap { $0["target"] as? String }) == Set((0..<500).map { "/Many/f\($0).jpg" }))
        #expect(items.allSatisfy { $0["origin"] as? String == "share" })
    }
}

/// Writes a file whose path is raw bytes (not necessarily UTF-8).
private func writeFile(_ path: [UInt8], contents: [UInt8]) throws {
    let fd = (path + [0]).withUnsafeBufferPointer { buffer in
        buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
    }
    guard fd >= 0 else { throw TestFailure("cannot create \(String(decoding: path, as: UTF8.self)): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    guard contents.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == contents.count else { throw TestFailure("short write") }
}
