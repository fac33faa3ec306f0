import Foundation
import Glibc
import TestSupport
import Testing

/// The issue's bad-input list, end to end through the real `instant-upload` and `share-to`
/// binaries: a missing file, a folder, a FIFO, an unreadable file, names with spaces,
/// newlines or bytes that are not UTF-8, a corrupt or foreign database, a malformed config.
/// Each gets a message naming the thing and what to do; good files in the same command are
/// still queued; nothing crashes; names are shown escaped, never as raw control characters.
@Suite("Bad input through the real binaries")
struct BadInputTests {
    // MARK: Files given to upload and share-to

    @Test("one upload with a missing file, a folder, a FIFO and unreadable files queues the good ones (the folder's with its name) and names each bad one")
    func mixedUpload() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        let home = session.home.path
        let good = [
            try session.home.file("in/good.jpg", bytes: Array("good".utf8)),
            try session.home.file("in/with space.jpg", bytes: Array("space".utf8)),
            try session.home.file("in/new\nline.jpg", bytes: Array("newline".utf8)),
        ]
        let missing = home + "/in/gone.jpg"
        let missingWithEscape = home + "/in/gone\u{1b}[31mred.jpg"
        let folder = home + "/in/album"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try session.home.file("in/album/inside.jpg", bytes: [1])
        let fifo = home + "/in/pipe"
        #expect(mkfifo(fifo, 0o644) == 0)
        let secret = try session.home.file("in/secret.jpg", bytes: Array("secret".utf8))
        let lockedInner = try session.home.file("in/locked/inner.jpg", bytes: Array("inner".utf8))

        // Root reads everything, so the person here is `nobody`, owning their own session.
        let person = try NobodySession(session)
        #expect(chmod(secret, 0) == 0)
        #expect(chmod(home + "/in/locked", 0) == 0)
        let cat = try person.run("/bin/cat", [secret])
        try #require(cat.status != 0, "the test needs a file its user cannot read; cat said: \(cat.stdout)")

        let r = try person.cli(["upload", "--to", "/X", good[0], missing, folder, good[1], fifo, secret, missingWithEscape,
                                lockedInner, good[2]])
        #expect(r.status == 1, "stdout: \(r.stdout) stderr: \(r.stderr)")
        #expect(r.stdout.contains("queued 4 files for home:/X"), "\(r.stdout)")
        let refusals = r.stderr.split(separator: "\n").filter { $0.hasPrefix("not queued: ") }
        #expect(refusals.count == 5, "\(r.stderr)")
        #expect(r.stderr.contains("\(missing): no such file"), "\(r.stderr)")
        #expect(!r.stderr.contains(folder + ":"), "a folder is sent with what is inside it: \(r.stderr)")
        #expect(r.stderr.contains("\(fifo): is a pipe"), "\(r.stderr)")
        #expect(r.stderr.contains("\(secret): permission denied"), "\(r.stderr)")
        #expect(r.stderr.contains("chmod u+r"), "the unreadable file says what to do: \(r.stderr)")
        #expect(r.stderr.contains("\(lockedInner): permission denied"), "\(r.stderr)")
        #expect(r.stderr.contains("folder above it"), "the file in a locked folder says where to look: \(r.stderr)")
        // The escape character arrives as text, never as a raw control character.
        #expect(r.stderr.contains("gone\\x1b[31mred.jpg: no such file"), "\(r.stderr)")
        #expect(!r.stderr.contains("\u{1b}"))
        #expect(!r.stdout.contains("\u{1b}"))

        let items = try person.items()
        #expect(items.count == 4)
        #expect(Set(items.compactMap { $0["source"] as? String }) == Set(good + [folder + "/inside.jpg"]))
        for item in items {
            #expect(item["state"] as? String == "queued")
            #expect(item["origin"] as? String == "manual")
            #expect(item["direction"] as? String == "upload")
            let name = try #require(item["name"] as? String)
            #expect(item["target"] as? String == (name == "inside.jpg" ? "/X/album/" : "/X/") + name)
        }

        // The newline in a name is shown as `\n`, never as a line break inside the name.
        let queue = try person.cli(["queue"])
        #expect(queue.status == 1, "work waits and no agent runs: \(queue.stderr)")
        #expect(queue.stdout.contains("new\\nline.jpg"), "\(queue.stdout)")
        #expect(!queue.stdout.contains("new\nline"), "\(queue.stdout)")
        #expect(!queue.stdout.split(separator: "\n").contains { $0.hasPrefix("line.jpg") })
        let newlineID = try #require(items.first { ($0["source"] as? String) == good[2] }?["id"] as? Int)
        let show = try person.cli(["show", String(newlineID)])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("new\\nline.jpg"), "\(show.stdout)")
        #expect(!show.stdout.contains("new\nline"), "\(show.stdout)")
    }

    @Test("names that are not UTF-8, given through a shell glob, are queued, shown as \\xff and uploaded")
    func nonUTF8Names() throws {
        let server = try ReferenceServer()
        try server.makeFolder("X")
        let session = try AgentHarness()
        try session.addAccount(server)
        let folder = session.home.path + "/odd"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let latin1 = Array("caf".utf8) + [0xe9] + Array(".jpg".utf8)         // café.jpg in ISO-8859-1
        let broken = Array("bad".utf8) + [0xff] + Array("name.jpg".utf8)
        try writeFile(Array(folder.utf8) + [UInt8(ascii: "/")] + latin1, contents: Array("latin-1 name".utf8))
        try writeFile(Array(folder.utf8) + [UInt8(ascii: "/")] + broken, contents: Array("0xff name".utf8))

        // Process takes [String] arguments, so the raw bytes reach the binary through a glob.
        let r = try Shell.capture("/bin/sh", ["-c", #""$0" upload --to /X "$1"/*"#, Repository.binaries + "/instant-upload", folder],
                                  environment: session.environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("queued 2 files"), "\(r.stdout)")
        // Never silently: the command says which name the server gets instead.
        #expect(r.stderr.contains("note: caf\\xe9.jpg goes to the server as caf\u{FFFD}.jpg"), "\(r.stderr)")
        #expect(r.stderr.contains("note: bad\\xffname.jpg goes to the server as bad\u{FFFD}name.jpg"), "\(r.stderr)")

        let queue = try session.cli(["queue"])
        #expect(queue.stdout.contains("caf\\xe9.jpg"), "\(queue.stdout)")
        #expect(queue.stdout.contains("bad\\xffname.jpg"), "\(queue.stdout)")
        let nameLines = queue.stdout.split(separator: "\n").filter { $0.contains("#") && $0.contains(" to home:") }
        #expect(nameLines.count == 2 && !nameLines.contains { $0.contains("\u{FFFD}") },
                "people see their own name's bytes escaped, not replaced: \(queue.stdout)")
        // The row itself says what the server stores.
        #expect(queue.stdout.replacingOccurrences(of: "\n       ", with: " ")
                    .contains("note: named caf\u{FFFD}.jpg on the server, which takes only UTF-8 names"), "\(queue.stdout)")
        let items = try session.items()
        #expect(items.count == 2)
        #expect(items.allSatisfy { ($0["note"] as? String)?.contains("UTF-8") == true }, "\(items.map { $0["note"] ?? "" })")
        // JSON carries real text: bytes that are not UTF-8 become U+FFFD (see JSONOutputTests).
        #expect(Set(items.compactMap { $0["name"] as? String }) == ["caf\u{FFFD}.jpg", "bad\u{FFFD}name.jpg"])
        let brokenID = try #require(items.first { ($0["name"] as? String) == "bad\u{FFFD}name.jpg" }?["id"] as? Int)
        let show = try session.cli(["show", String(brokenID)])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("bad\\xffname.jpg"), "\(show.stdout)")
        #expect(show.stdout.contains("named bad\u{FFFD}name.jpg on the server"), "\(show.stdout)")

        try session.startAgent()
        try session.waitForAll("completed", count: 2)
        let stored = try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/X")
        let contents = try Set(stored.map { try String(contentsOfFile: server.tree() + "/X/" + $0, encoding: .utf8) })
        #expect(contents == ["latin-1 name", "0xff name"], "on the server: \(stored)")
        let done = try session.cli(["queue", "--state", "completed"])
        #expect(done.stdout.components(separatedBy: "on the server, which takes only UTF-8 names").count == 3,
                "a completed row still says it: \(done.stdout)")
    }

    @Test("two names that differ only in bytes that are not UTF-8 both arrive; neither overwrites the other")
    func nonUTF8NamesDoNotCollide() throws {
        let server = try ReferenceServer()
        try server.makeFolder("X")
        let session = try AgentHarness()
        try session.addAccount(server)
        let folder = session.home.path + "/odd"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try writeFile(Array(folder.utf8) + Array("/x".utf8) + [0xfe] + Array(".jpg".utf8), contents: Array("first".utf8))
        try writeFile(Array(folder.utf8) + Array("/x".utf8) + [0xff] + Array(".jpg".utf8), contents: Array("second".utf8))
        let r = try Shell.capture("/bin/sh", ["-c", #""$0" upload --to /X "$1"/*"#, Repository.binaries + "/instant-upload", folder],
                                  environment: session.environment)
        #expect(r.status == 0, "\(r.stderr)")
        try session.startAgent()
        try session.waitForAll("completed", count: 2)
        let items = try session.items()
        #expect(Set(items.compactMap { $0["target"] as? String }).count == 2, "two files, one target: \(items.map { $0["target"] ?? "" })")
        let stored = try FileManager.default.contentsOfDirectory(atPath: server.tree() + "/X")
        let contents = try Set(stored.map { try String(contentsOfFile: server.tree() + "/X/" + $0, encoding: .utf8) })
        #expect(contents == ["first", "second"], "on the server: \(stored)")
    }

    @Test("share-to queues with origin share, and names a missing file beside it")
    func shareTo() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        let file = try session.home.file("desk/shared doc.pdf", bytes: Array("shared".utf8))
        let missing = session.home.path + "/desk/not-there.pdf"
        let r = try session.shareTo(["--to", "/X", file, missing])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("\(missing): no such file"), "\(r.stderr)")
        let items = try session.items()
        #expect(items.count == 1)
        #expect(items.first?["origin"] as? String == "share")
        #expect(items.first?["source"] as? String == file)
        #expect(items.first?["target"] as? String == "/X/shared doc.pdf")
    }

    // MARK: The queue database

    @Test("random bytes at the queue's path: every command exits 3 naming the file and saying to move it aside, and leaves it as it was")
    func corruptDatabase() throws {
        let session = try AgentHarness()
        let good = try session.home.file("in/good.jpg", bytes: Array("good".utf8))
        let garbage = TestData.bytes(count: 16_384, seed: 7)
        try session.home.file("state/instant-upload/queue.sqlite3", bytes: garbage)
        try expectRefusedDatabase(session, good: good)
        let after = try Array(Data(contentsOf: URL(fileURLWithPath: session.databasePath)))
        #expect(after.count == garbage.count && after.elementsEqual(garbage), "the file at the queue's path changed")
    }

    @Test("a queue database whose pages are damaged: every command exits 3 naming the file and saying to move it aside")
    func damagedQueueDatabase() throws {
        let session = try AgentHarness()
        let good = try session.home.file("in/good.jpg", bytes: Array("good".utf8))
        let made = try session.cli(["status"])
        try #require(made.status == 0, "\(made.stderr)")
        // Keep the header page (so SQLite opens it) and overwrite every page after it.
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: session.databasePath)))
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        try #require(pageSize >= 512 && bytes.count > pageSize, "page size \(pageSize), \(bytes.count) bytes")
        for i in pageSize..<bytes.count { bytes[i] = 0xa5 }
        try session.home.file("state/instant-upload/queue.sqlite3", bytes: bytes)
        try expectRefusedDatabase(session, good: good)
    }

    @Test("another program's SQLite database at the queue's path: every command exits 3 naming the file and saying to move it aside",
          arguments: ["", "PRAGMA user_version = 7;"])
    func foreignDatabase(extra: String) throws {
        let session = try AgentHarness()
        let good = try session.home.file("in/good.jpg", bytes: Array("good".utf8))
        try makeForeignDatabase(at: session.databasePath, extra: extra)
        try expectRefusedDatabase(session, good: good)
    }

    @Test("another program's SQLite database is refused without being changed: same bytes, same permissions")
    func foreignDatabaseUntouched() throws {
        let session = try AgentHarness()
        try makeForeignDatabase(at: session.databasePath, extra: "")
        #expect(chmod(session.databasePath, 0o644) == 0)
        let before = try Array(Data(contentsOf: URL(fileURLWithPath: session.databasePath)))
        for arguments in [["status"], ["queue"]] {
            let r = try session.cli(arguments)
            #expect(r.status == 3, "\(arguments): \(r.stderr)")
        }
        let after = try Array(Data(contentsOf: URL(fileURLWithPath: session.databasePath)))
        let firstChange = zip(before, after).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstChange == nil && after.count == before.count,
                "the foreign file changed: \(before.count) -> \(after.count) bytes, first difference at byte \(firstChange ?? -1)")
        var st = stat()
        #expect(stat(session.databasePath, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o644, "mode is now \(String(st.st_mode & 0o777, radix: 8))")
        #expect(!FileManager.default.fileExists(atPath: session.databasePath + "-wal"))
    }

    // MARK: The config file

    @Test("a malformed config: run and upload exit 3 naming the file and the line",
          arguments: [("[agent]\nautostart = false\n[transfers]\nuploads = lots\n", 4),
                      ("[agent]\nautostart = false\n\n[transfers]\nuploads 3\n", 5),
                      ("[agent]\nautostart = false\n[watch \"camera\"]\nfolder = Pictures/Camera\nto = /Photos\n", 4),
                      ("[agent]\nautostart = false\n[watch \"camera\"]\nfolder = /tmp\nto =   \n", 3)])
    func malformedConfig(text: String, line: Int) throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        try session.writeConfig(text)
        let configPath = session.home.path + "/config/instant-upload/config.ini"
        let good = try session.home.file("in/good.jpg", bytes: Array("good".utf8))

        // A timeout in case the agent accepts the file and keeps running.
        let run = try Shell.capture("/usr/bin/timeout", ["20", Repository.binaries + "/instant-upload", "run"], environment: session.environment)
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stderr.contains(configPath), "\(run.stderr)")
        #expect(run.stderr.contains("line \(line)"), "\(run.stderr)")

        let upload = try session.cli(["upload", "--to", "/X", good])
        #expect(upload.status == 3, "stdout: \(upload.stdout) stderr: \(upload.stderr)")
        #expect(upload.stderr.contains(configPath), "\(upload.stderr)")
        #expect(upload.stderr.contains("line \(line)"), "\(upload.stderr)")
        #expect(!upload.stdout.contains("started the agent"), "no agent can start with this config: \(upload.stdout)")
    }

    // MARK: The command line

    @Test("an unknown flag exits 2 with the command's usage", arguments: [
        ["upload", "--bogus", "--to", "/X", "f"], ["status", "--frobnicate"], ["queue", "--state", "sideways"], ["show", "abc"],
    ])
    func unknownFlag(arguments: [String]) throws {
        let session = try AgentHarness()
        let r = try session.cli(arguments)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("usage: instant-upload \(arguments[0])"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test("show, cancel and retry of IDs that do not exist exit 1 naming the ID; known IDs in the same command are still handled")
    func unknownIDs() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        for arguments in [["show", "999"], ["show", "999", "--json"], ["cancel", "999"], ["retry", "999"]] {
            let r = try session.cli(arguments)
            #expect(r.status == 1, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains("999"), "\(arguments): \(r.stderr)")
            #expect(r.stdout.isEmpty, "\(arguments): \(r.stdout)")
        }
        let first = try session.home.file("in/a.jpg", bytes: [1])
        let second = try session.home.file("in/b.jpg", bytes: [2])
        #expect(try session.cli(["upload", "--to", "/X", first, second]).status == 0)
        let ids = try session.items().compactMap { $0["id"] as? Int }.sorted()
        try #require(ids.count == 2)

        let retry = try session.cli(["retry", String(ids[0]), "998"])
        #expect(retry.status == 1, "\(retry.stderr)")
        #expect(retry.stderr.contains("998"))
        #expect(retry.stdout.contains("already queued"), "\(retry.stdout)")

        let cancel = try session.cli(["cancel", String(ids[0]), "998"])
        #expect(cancel.status == 1, "\(cancel.stderr)")
        #expect(cancel.stderr.contains("998"))
        #expect(try session.items().compactMap { $0["id"] as? Int } == [ids[1]])
    }
}

// MARK: Helpers

/// Every command that opens the queue, run against a broken database file.
private func expectRefusedDatabase(_ session: AgentHarness, good: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let commands = [["status"], ["status", "--json"], ["queue"], ["queue", "--json"], ["queue", "--state", "failed"],
                    ["show", "1"], ["upload", "--to", "/X", good], ["cancel", "1"], ["retry", "1"], ["clear", "completed"],
                    ["pause", "1"], ["pause", "--all"], ["resume", "1"], ["resume", "--all"]]
    for arguments in commands {
        let r = try session.cli(arguments)
        #expect(r.status == 3, "\(arguments) exited \(r.status): \(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderr.contains(session.databasePath), "\(arguments): \(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderr.contains("move it aside"), "\(arguments): \(r.stderr)", sourceLocation: sourceLocation)
    }
}

/// A small SQLite database that belongs to some other program.
private func makeForeignDatabase(at path: String, extra: String) throws {
    try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Shell.run("/usr/bin/sqlite3", [path, "CREATE TABLE photos (id INTEGER PRIMARY KEY, title TEXT); INSERT INTO photos (title) VALUES ('beach'); \(extra)"])
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

/// The harness's session handed to the unprivileged user `nobody` (65534) when the tests run
/// as root, who can read anything: the whole home folder changes owner, and commands run
/// under `setpriv` (util-linux), so permission checks are real. As any other user, commands
/// run as that user directly.
private struct NobodySession {
    static let uid = "65534"
    let session: AgentHarness
    let drop = getuid() == 0

    init(_ session: AgentHarness) throws {
        self.session = session
        if drop { try Shell.run("/bin/chown", ["-R", "\(Self.uid):\(Self.uid)", session.home.path]) }
    }

    func run(_ executable: String, _ arguments: [String]) throws -> Shell.Result {
        guard drop else { return try Shell.capture(executable, arguments, environment: session.environment) }
        return try Shell.capture("/usr/bin/setpriv", ["--reuid=\(Self.uid)", "--regid=\(Self.uid)", "--clear-groups", executable] + arguments,
                                 environment: session.environment)
    }

    func cli(_ arguments: [String]) throws -> Shell.Result {
        try run(Repository.binaries + "/instant-upload", arguments)
    }

    func items() throws -> [[String: Any]] {
        let r = try cli(["queue", "--json"])
        guard r.status == 0 || r.status == 1 else { throw TestFailure("queue --json failed (\(r.status)): \(r.stderr)") }
        guard let array = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] else {
            throw TestFailure("queue --json is not a list: \(r.stdout.prefix(300))")
        }
        return array
    }
}
