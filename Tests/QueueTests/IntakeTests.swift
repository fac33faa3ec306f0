import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing

@Suite("Intake: files and folders given to a front door")
struct IntakeTests {
    let folder = TemporaryFolder("iu-intake")

    func path(_ relative: String) -> String { folder.path + "/" + relative }

    func makeStore() throws -> (QueueStore, Account) {
        let store = try QueueStore(path: folder.path + "/state/queue.sqlite3")
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        return (store, account)
    }

    @Test("a folder is queued with its structure: every regular file under the folder's name in the target")
    func folderStructure() throws {
        try folder.file("Album/a.jpg", bytes: [1])
        try folder.file("Album/2024/b.jpg", bytes: [2, 2])
        try folder.file("Album/2024/deep/c d.jpg", bytes: [3])
        try folder.file("Album/.hidden", bytes: [4])
        try FileManager.default.createDirectory(atPath: path("Album/empty"), withIntermediateDirectories: true)
        let single = try folder.file("single.jpg", bytes: [5])
        let (store, account) = try makeStore()
        let result = try Intake.enqueueUploads([LocalPath(path("Album")), LocalPath(single)], into: "/Photos", account: account,
                                               origin: .share, store: store)
        #expect(result.refused.isEmpty, "\(result.refused)")
        let rows = try store.transfers()
        #expect(rows.map(\.remotePath) == ["/Photos/Album/.hidden", "/Photos/Album/2024/b.jpg", "/Photos/Album/2024/deep/c d.jpg",
                                           "/Photos/Album/a.jpg", "/Photos/single.jpg"])
        #expect(rows.map(\.localPath.text) == [path("Album/.hidden"), path("Album/2024/b.jpg"), path("Album/2024/deep/c d.jpg"),
                                               path("Album/a.jpg"), single])
        #expect(rows.first { $0.remotePath.hasSuffix("b.jpg") }?.bytesTotal == 2)
    }

    @Test("a folder given as . keeps its own name")
    func dotFolder() throws {
        try folder.file("Trip/x.jpg", bytes: [1])
        let cwd = FileManager.default.currentDirectoryPath
        defer { _ = FileManager.default.changeCurrentDirectoryPath(cwd) }
        #expect(FileManager.default.changeCurrentDirectoryPath(path("Trip")))
        let selection = Intake.select([LocalPath(".")])
        #expect(selection.files.map(\.relative) == [["Trip", "x.jpg"]])
    }

    @Test("pipes, sockets and devices inside a folder are refused by name; the rest of the folder still goes")
    func oddThingsInside() throws {
        try folder.file("Box/ok.txt", bytes: [1])
        #expect(mkfifo(path("Box/pipe"), 0o644) == 0)
        try Shell.run("/usr/bin/python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", path("Box/sock")])
        #expect(symlink("/dev/null", path("Box/device")) == 0)
        let selection = Intake.select([LocalPath(path("Box"))])
        #expect(selection.files.map(\.relative) == [["Box", "ok.txt"]])
        let problems = Dictionary(uniqueKeysWithValues: selection.refused.map { ($0.path.lastComponent.text, $0.problem) })
        #expect(problems["pipe"]?.contains("is a pipe (FIFO)") == true, "\(problems)")
        #expect(problems["sock"]?.contains("is a socket") == true, "\(problems)")
        #expect(problems["device"]?.contains("is a device") == true, "\(problems)")
    }

    @Test("links are followed: a linked file and a linked folder are sent under the link's name")
    func linksFollowed() throws {
        try folder.file("elsewhere/real.jpg", bytes: [7])
        try folder.file("elsewhere/inner/x.jpg", bytes: [8])
        try folder.file("Set/own.jpg", bytes: [9])
        #expect(symlink(path("elsewhere/real.jpg"), path("Set/alias.jpg")) == 0)
        #expect(symlink(path("elsewhere/inner"), path("Set/linked")) == 0)
        #expect(symlink(path("nowhere"), path("Set/broken")) == 0)
        let selection = Intake.select([LocalPath(path("Set"))])
        #expect(selection.files.map { $0.relative.joined(separator: "/") } == ["Set/alias.jpg", "Set/linked/x.jpg", "Set/own.jpg"])
        #expect(selection.refused.map(\.path.lastComponent.text) == ["broken"])
        #expect(selection.refused.first?.problem.contains("broken link") == true)
    }

    @Test("a link back to a folder above is a loop: named once, not walked again, and the walk ends")
    func loops() throws {
        try folder.file("Loop/a.jpg", bytes: [1])
        try folder.file("Loop/sub/b.jpg", bytes: [2])
        #expect(symlink(path("Loop"), path("Loop/sub/back")) == 0)
        #expect(symlink("..", path("Loop/sub/up")) == 0)
        let selection = Intake.select([LocalPath(path("Loop"))])
        #expect(selection.files.map { $0.relative.joined(separator: "/") } == ["Loop/a.jpg", "Loop/sub/b.jpg"])
        #expect(selection.refused.count == 2, "\(selection.refused)")
        #expect(selection.refused.allSatisfy { $0.problem.contains("(a loop)") }, "\(selection.refused)")
    }

    @Test("two links to one folder: its files are sent once, the second way in is named")
    func repeatedFolder() throws {
        try folder.file("shared/x.jpg", bytes: [1])
        try FileManager.default.createDirectory(atPath: path("Two"), withIntermediateDirectories: true)
        #expect(symlink(path("shared"), path("Two/first")) == 0)
        #expect(symlink(path("shared"), path("Two/second")) == 0)
        let selection = Intake.select([LocalPath(path("Two"))])
        #expect(selection.files.map { $0.relative.joined(separator: "/") } == ["Two/first/x.jpg"])
        #expect(selection.refused.map(\.path.lastComponent.text) == ["second"])
        #expect(selection.refused.first?.problem.contains("the same folder as") == true)
    }

    @Test("a folder that cannot be listed is named with what to do")
    func unreadableFolder() throws {
        try folder.file("Locked/x.jpg", bytes: [1])
        chmod(path("Locked"), 0)
        defer { chmod(path("Locked"), 0o755) }
        // Root lists anything; the check then runs as `nobody` in a child process.
        if getuid() == 0 {
            let script = "import os,sys; os.setgid(65534); os.setuid(65534); os.listdir(sys.argv[1])"
            let r = try Shell.capture("/usr/bin/python3", ["-c", script, path("Locked")])
            try #require(r.status != 0, "the folder must be unlistable for an ordinary user")
            let selection = try runAsNobody(path("Locked"))
            #expect(selection.contains("permission denied; this folder cannot be listed"), "\(selection)")
        } else {
            let selection = Intake.select([LocalPath(path("Locked"))])
            #expect(selection.refused.first?.problem.contains("permission denied; this folder cannot be listed") == true)
        }
    }

    /// The refusals of `share-to --to /X PATH` run as `nobody`, which cannot read a mode-0 folder.
    func runAsNobody(_ target: String) throws -> String {
        chmod(folder.path, 0o755)
        let home = TemporaryFolder("iu-nobody")
        try Shell.run("/bin/chown", ["65534:65534", home.path])
        let env = ["HOME": home.path, "XDG_CONFIG_HOME": home.path + "/c", "XDG_STATE_HOME": home.path + "/s",
                   "XDG_RUNTIME_DIR": home.path + "/r", "PATH": "/usr/bin:/bin"]
        let r = try Shell.capture("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                       Repository.binaries + "/share-to", "--to", "/X", target], environment: env)
        return r.stderr
    }

    @Test("everything is queued in one transaction: a batch that cannot be written leaves no row behind")
    func oneTransaction() throws {
        for i in 0..<20 { try folder.file("Many/f\(i).jpg", bytes: [UInt8(i)]) }
        let (store, account) = try makeStore()
        // A trigger that refuses the 11th row makes the whole batch fail.
        try store.database.run("CREATE TRIGGER refuse BEFORE INSERT ON transfers WHEN (SELECT count(*) FROM transfers) >= 10 BEGIN SELECT RAISE(ABORT, 'full'); END")
        #expect(throws: (any Error).self) {
            try Intake.enqueueUploads([LocalPath(path("Many"))], into: "/X", account: account, origin: .manual, store: store)
        }
        #expect(try store.transfers().isEmpty)
    }

    @Test("recent folders: most recent first, no repeats, at most the limit, per account")
    func recentTargets() throws {
        let (store, home) = try makeStore()
        let work = try store.addAccount(name: "work", webdavURL: "http://127.0.0.1:1/dav/w/", tusURL: "http://127.0.0.1:1/files/", username: "w")
        let recent = RecentTargets(store: store)
        try recent.record("/Photos", for: home)
        try recent.record("Docs/", for: home)
        try recent.record("/Photos", for: home)
        try recent.record("/Reports", for: work)
        #expect(recent.folders(for: home) == ["/Photos", "/Docs"])
        #expect(recent.folders(for: work) == ["/Reports"])
        for i in 0..<20 { try recent.record("/F\(i)", for: home) }
        #expect(recent.folders(for: home).count == RecentTargets.limit)
        #expect(recent.folders(for: home).first == "/F19")
        // Durable: another store on the same file sees them.
        #expect(RecentTargets(store: try QueueStore(path: folder.path + "/state/queue.sqlite3")).folders(for: work) == ["/Reports"])
    }
}
