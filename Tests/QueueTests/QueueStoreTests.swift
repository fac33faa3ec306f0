import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing

@Suite("The queue store")
struct QueueStoreTests {
    let folder = TemporaryFolder("iu-queue")
    var path: String { folder.path + "/state/queue.sqlite3" }

    func makeStore() throws -> (QueueStore, Account) {
        let store = try QueueStore(path: path)
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        return (store, account)
    }

    func upload(_ account: Account, _ name: String, origin: Origin = .manual) -> NewTransfer {
        NewTransfer(direction: .upload, origin: origin, accountID: account.id, localPath: LocalPath("/tmp/\(name)"), remotePath: "/Photos/\(name)", bytesTotal: 10)
    }

    @Test("creates its folder 0700 and its file 0600, in WAL mode, at the current schema")
    func createsPrivately() throws {
        let (store, _) = try makeStore()
        var st = stat()
        stat(folder.path + "/state", &st)
        #expect(st.st_mode & 0o777 == 0o700)
        stat(path, &st)
        #expect(st.st_mode & 0o777 == 0o600)
        #expect(try store.database.query("PRAGMA journal_mode") { $0.text(0) } == ["wal"])
        #expect(try store.database.userVersion == Schema.latest)
    }

    @Test("enqueues many files in one transaction and reads them back in order")
    func enqueueMany() throws {
        let (store, account) = try makeStore()
        let ids = try store.enqueue((0..<500).map { upload(account, "f\($0).jpg") })
        #expect(ids.count == 500)
        let rows = try store.transfers(state: .queued)
        #expect(rows.map(\.id) == ids)
        #expect(rows.first?.accountName == "home")
        #expect(try store.summary().count(.queued, .upload) == 500)
    }

    @Test("hand-made work runs before the auto-upload backlog")
    func lanes() throws {
        let (store, account) = try makeStore()
        try store.enqueue((0..<5).map { upload(account, "auto\($0).jpg", origin: .auto) })
        let manual = try store.enqueue([upload(account, "mine.jpg", origin: .share)])
        let next = try store.runnable(direction: .upload, now: nowMilliseconds(), limit: 1)
        #expect(next.map(\.id) == manual)
    }

    @Test("queued rows and due retrying rows are taken in one order (hand-made first, then oldest), never one kind before the other; a retry not due yet waits")
    func runnableOrder() throws {
        let (store, account) = try makeStore()
        let now = nowMilliseconds()
        let ids = try store.enqueue([upload(account, "a0.jpg", origin: .auto), upload(account, "a1.jpg", origin: .auto),
                                     upload(account, "m2.jpg"), upload(account, "a3.jpg", origin: .auto), upload(account, "m4.jpg"),
                                     upload(account, "m5.jpg")])
        for id in [ids[1], ids[2], ids[5]] { try store.start(id, resumedAt: 0) }
        try store.retryLater(ids[1], reason: Reason(.timeout), at: now - 1, attempts: 1)
        try store.retryLater(ids[2], reason: Reason(.timeout), at: now - 1, attempts: 1)
        try store.retryLater(ids[5], reason: Reason(.timeout), at: now + 60_000, attempts: 1)
        #expect(try store.runnable(direction: .upload, now: now, limit: 10).map(\.id) == [ids[2], ids[4], ids[0], ids[1], ids[3]])
        #expect(try store.runnable(direction: .upload, now: now, limit: 3).map(\.id) == [ids[2], ids[4], ids[0]])
    }

    @Test("a state's rows of both directions come in one order (hand-made first, then oldest), limited; completed ones newest first")
    func viewOrder() throws {
        let (store, account) = try makeStore()
        func download(_ name: String, origin: Origin = .manual) -> NewTransfer {
            NewTransfer(direction: .download, origin: origin, accountID: account.id, localPath: LocalPath("/tmp/d-\(name)"),
                        remotePath: "/Photos/\(name)", bytesTotal: 10)
        }
        let ids = try store.enqueue([upload(account, "a0.jpg", origin: .auto), download("a1.jpg", origin: .auto), upload(account, "m2.jpg"),
                                     download("m3.jpg"), upload(account, "a4.jpg", origin: .auto), download("m5.jpg")])
        #expect(try store.transfers(state: .queued).map(\.id) == [ids[2], ids[3], ids[5], ids[0], ids[1], ids[4]])
        #expect(try store.transfers(state: .queued, limit: 4).map(\.id) == [ids[2], ids[3], ids[5], ids[0]])
        #expect(try store.transfers(state: .queued, direction: .download).map(\.id) == [ids[3], ids[5], ids[1]])
        #expect(try store.transfers().map(\.id) == [ids[2], ids[3], ids[5], ids[0], ids[1], ids[4]])
        for id in [ids[4], ids[1], ids[3]] {
            try store.start(id, resumedAt: 0)
            try store.complete(id, sha256: nil, bytes: 10)
            usleep(2_000)  // a later finishing time for each
        }
        #expect(try store.transfers(state: .completed).map(\.id) == [ids[3], ids[1], ids[4]])
        #expect(try store.transfers(state: .completed, direction: .download, limit: 1).map(\.id) == [ids[3]])
        #expect(try store.transfers(state: .queued).map(\.id) == [ids[2], ids[5], ids[0]])
    }

    @Test("a row read earlier and moved since is neither started nor completed from what was read: nil, and the row is as it is")
    func staleRow() throws {
        let (store, account) = try makeStore()
        let id = try store.enqueue([upload(account, "a.jpg")])[0]
        let queued = try #require(try store.transfer(id: id))
        #expect(try store.start(queued, resumedAt: 0) != nil)
        #expect(try store.start(queued, resumedAt: 0) == nil, "already started from the same read")
        let running = try #require(try store.transfer(id: id))
        try store.fail(id, reason: Reason(.serverError, "the server failed"))
        #expect(try store.complete(running, sha256: nil, bytes: 10) == nil)
        #expect(try store.transfer(id: id)?.state == .failed)
    }

    @Test("a row goes through its life only by legal transitions")
    func lifecycle() throws {
        let (store, account) = try makeStore()
        let id = try store.enqueue([upload(account, "a.jpg")])[0]
        #expect(throws: IllegalTransition.self) { try store.complete(id, sha256: nil, bytes: 1) }
        try store.start(id, resumedAt: 0)
        try store.checkpoint(id, offset: 5, hashState: [1, 2, 3], counters: ResumeCounters(bytesRead: 5, bytesHashed: 5), resetAttempts: true)
        try store.retryLater(id, reason: Reason(.connectionReset), at: nowMilliseconds() + 60_000, attempts: 1)
        var row = try #require(try store.transfer(id: id))
        #expect(row.state == .retrying && row.reason?.code == .connectionReset && row.checkpoint.offset == 5 && row.checkpoint.hashState == [1, 2, 3])
        #expect(try store.runnable(direction: .upload, now: nowMilliseconds(), limit: 3).isEmpty, "not due yet")
        try store.start(id, resumedAt: 5)
        try store.complete(id, sha256: "abc", bytes: 10)
        row = try #require(try store.transfer(id: id))
        #expect(row.state == .completed && row.sha256 == "abc" && row.completedAt != nil && row.reason == nil)
        #expect(throws: IllegalTransition.self) { try store.fail(id, reason: Reason(.quota)) }
    }

    @Test("retry moves failed rows back to queued with a new folder when asked")
    func retryToNewFolder() throws {
        let (store, account) = try makeStore()
        let id = try store.enqueue([upload(account, "a.jpg")])[0]
        try store.start(id, resumedAt: 0)
        try store.fail(id, reason: Reason(.targetMissing))
        #expect(try store.retry([id], newRemoteFolder: "/Elsewhere/") == [id])
        let row = try #require(try store.transfer(id: id))
        #expect(row.state == .queued && row.remotePath == "/Elsewhere/a.jpg" && row.reason == nil && row.uploadURL == nil)
    }

    @Test("the agent takes back rows it left in progress, at their checkpoint")
    func recover() throws {
        let (store, account) = try makeStore()
        let id = try store.enqueue([upload(account, "a.jpg")])[0]
        try store.start(id, resumedAt: 0)
        try store.checkpoint(id, offset: 7, hashState: nil, counters: ResumeCounters(), resetAttempts: false)
        try store.progress(id, bytesDone: 9)
        #expect(try store.recoverAbandoned() == 1)
        let row = try #require(try store.transfer(id: id))
        #expect(row.state == .queued && row.bytesDone == 7)
    }

    @Test("clear removes finished lists, never active rows")
    func clear() throws {
        let (store, account) = try makeStore()
        let ids = try store.enqueue((0..<3).map { upload(account, "\($0).jpg") })
        try store.start(ids[0], resumedAt: 0); try store.complete(ids[0], sha256: nil, bytes: 1)
        try store.start(ids[1], resumedAt: 0); try store.fail(ids[1], reason: Reason(.quota))
        #expect(try store.clear(.all) == 2)
        #expect(try store.transfers().map(\.id) == [ids[2]])
    }

    @Test("a file that is not a database gets a message saying what to do")
    func foreignFile() throws {
        try FileManager.default.createDirectory(atPath: folder.path + "/state", withIntermediateDirectories: true)
        try folder.file("state/queue.sqlite3", bytes: Array(repeating: 0x41, count: 8192))
        #expect { try QueueStore(path: path) } throws: { error in
            let text = "\(error)"
            return text.contains("damaged or is not a queue database") && text.contains("move it aside")
        }
    }

    @Test("another program's SQLite database is not taken over")
    func foreignDatabase() throws {
        try FileManager.default.createDirectory(atPath: folder.path + "/state", withIntermediateDirectories: true)
        let db = try Database(path: path)
        try db.execute("CREATE TABLE photos (x)")
        #expect { try QueueStore(path: path) } throws: { "\($0)".contains("not instant-upload's queue") }
    }

    @Test("a database from a newer version is refused, not damaged")
    func newerSchema() throws {
        _ = try makeStore()
        let db = try Database(path: path)
        try db.execute("PRAGMA user_version = 99")
        #expect { try QueueStore(path: path) } throws: { "\($0)".contains("newer instant-upload") }
    }

    @Test("paths that are not UTF-8 survive the database byte for byte")
    func rawPaths() throws {
        let (store, account) = try makeStore()
        let raw = LocalPath(bytes: Array("/tmp/caf".utf8) + [0xe9, 0x0a, 0xff] + Array(".jpg".utf8))
        let id = try store.enqueue([NewTransfer(direction: .upload, origin: .manual, accountID: account.id, localPath: raw, remotePath: "/x")])[0]
        #expect(try store.transfer(id: id)?.localPath == raw)
        #expect(try store.transfer(id: id)?.name == "caf\\xe9\\n\\xff.jpg")
    }

    @Test("a thousand rows held by an account or a Wi-Fi rule never hide the rows behind them")
    func heldRowsDoNotHideOthers() throws {
        let (store, camera) = try makeStore()
        let wifiOnly = try store.addAccount(name: "camera", webdavURL: "http://127.0.0.1:1/dav/c/", tusURL: "http://127.0.0.1:1/files/",
                                            username: "c", wifiOnly: true)
        let other = try store.addAccount(name: "work", webdavURL: "http://127.0.0.1:1/dav/w/", tusURL: "http://127.0.0.1:1/files/", username: "w")
        try store.enqueue((0..<1000).map { upload(camera, "a\($0).jpg", origin: .auto) })
        try store.enqueue((0..<1000).map { upload(wifiOnly, "w\($0).jpg", origin: .auto) })
        let mine = try store.enqueue([upload(wifiOnly, "by-hand.jpg")])
        let theirs = try store.enqueue([upload(other, "b.jpg", origin: .auto)])
        let now = nowMilliseconds()
        try store.hold(.wifiFlag(account: wifiOnly.id), reason: Reason(.wifi))
        let next = try store.runnable(direction: .upload, now: now, limit: 3, excludingAccounts: [camera.id])
        #expect(next.map(\.id) == mine + theirs, "hand-made work of the Wi-Fi-only account goes; then the other account's row")
    }

    @Test("holding an account says why on its queued rows and takes due retrying rows back to queued")
    func holdNotesRows() throws {
        let (store, account) = try makeStore()
        let other = try store.addAccount(name: "work", webdavURL: "http://127.0.0.1:1/dav/w/", tusURL: "http://127.0.0.1:1/files/", username: "w")
        let ids = try store.enqueue((0..<3).map { upload(account, "\($0).jpg") })
        let untouched = try store.enqueue([upload(other, "o.jpg")])[0]
        try store.start(ids[1], resumedAt: 0); try store.retryLater(ids[1], reason: Reason(.timeout), at: 0, attempts: 3)
        try store.start(ids[2], resumedAt: 0); try store.retryLater(ids[2], reason: Reason(.timeout), at: nowMilliseconds() + 60_000, attempts: 1)
        try store.hold(.account(account.id), reason: Reason(.credentials))
        let rows = try store.transfers()
        #expect(rows.first { $0.id == ids[0] }?.reason?.code == .credentials)
        #expect(rows.first { $0.id == ids[1] }.map { ($0.state, $0.reason?.code, $0.attempts) } ?? (.failed, nil, 0) == (.queued, .credentials, 3))
        #expect(rows.first { $0.id == ids[2] }?.state == .retrying, "not due yet: it keeps its own reason and time")
        #expect(rows.first { $0.id == untouched }?.reason == nil)
    }

}
