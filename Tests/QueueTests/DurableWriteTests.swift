import Foundation
import Platform
import Queue
import TestSupport
import Testing

/// What a person hands over is on the disk before the command says it is queued: each of
/// these commits flushes the WAL before it returns, counted at SQLite's file layer.
/// Progress checkpoints do not wait for the disk.
@Suite("Durable writes")
struct DurableWriteTests {
    let folder = TemporaryFolder("iu-durable")
    var path: String { folder.path + "/state/queue.sqlite3" }
    var wal: String { path + "-wal" }

    init() { _ = SyncCounter.install }

    func upload(_ account: Account, _ name: String) -> NewTransfer {
        NewTransfer(direction: .upload, origin: .manual, accountID: account.id, localPath: LocalPath("/tmp/\(name)"),
                    remotePath: "/Photos/\(name)", bytesTotal: 10)
    }

    /// A queue with uploads of `names` taken to in progress.
    func started(_ names: String...) throws -> (QueueStore, [Int64]) {
        let store = try QueueStore(path: path)
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        let ids = try store.enqueue(names.map { upload(account, $0) })
        for id in ids { try store.start(id, resumedAt: 0) }
        return (store, ids)
    }

    /// WAL syncs during `body`.
    func syncs(_ body: () throws -> Void) rethrows -> Int {
        let before = SyncCounter.syncs(of: wal)
        try body()
        return SyncCounter.syncs(of: wal) - before
    }

    @Test("enqueue, retry, cancel, clear, --now and account changes reach the disk before they return")
    func personWritesAreFlushed() throws {
        let store = try QueueStore(path: path)
        var account: Account!
        #expect(try syncs { account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a") } > 0, "account add")
        var ids: [Int64] = []
        #expect(try syncs { ids = try store.enqueue((0..<4).map { upload(account, "\($0).jpg") }) } > 0, "enqueue")
        try store.start(ids[0], resumedAt: 0)
        try store.fail(ids[0], reason: Reason(.quota))
        #expect(try syncs { try store.retry([ids[0]]) } > 0, "retry")
        #expect(try syncs { try store.setIgnoreRules([ids[1]]) } > 0, "retry --now")
        #expect(try syncs { try store.requestCancel([ids[2]]) } > 0, "cancel")
        #expect(try syncs { try store.remove(ids[2], by: .cancel) } > 0, "cancel without an agent")
        try store.start(ids[3], resumedAt: 0)
        try store.complete(ids[3], sha256: nil, bytes: 10)
        #expect(try syncs { try store.clear(.completed) } > 0, "clear")
        #expect(try syncs { _ = try store.pause([ids[1]]) } > 0, "pause")
        #expect(try syncs { _ = try store.resume([ids[1]]) } > 0, "resume")
        #expect(try syncs { try store.pauseQueue() } > 0, "pause --all")
        #expect(try syncs { try store.resumeQueue() } > 0, "resume --all")
        #expect(try syncs { try store.removeAccount(named: "home") } > 0, "account remove")
    }

    @Test("what an upload is about to make, and its completion, reach the disk before the next step: a crash never takes a made file back to unsent")
    func finishingAndCompletingAreFlushed() throws {
        let (store, ids) = try started("a.jpg")
        let id = ids[0]
        #expect(try syncs { try store.recordFinishing(id, remotePath: "/Photos/a (1).jpg", bytes: 10, sha256: "ab") } > 0, "about to make the file")
        let recorded = try #require(try store.transfer(id: id))
        #expect(recorded.finishing && recorded.remotePath == "/Photos/a (1).jpg" && recorded.sha256 == "ab")
        #expect(try syncs { try store.complete(id, sha256: "ab", bytes: 10, verified: true) } > 0, "completed")
        let done = try #require(try store.transfer(id: id))
        #expect(!done.finishing && done.verifiedAt != nil && done.state == .completed)
    }

    @Test("a new file whose SHA-256 the server keeps, and a completion its recorded file covers, do not wait for the disk; one whose original may go to the trash does")
    func recognisableStepsAreNotFlushed() throws {
        let (store, ids) = try started("a.jpg", "b.jpg")
        #expect(try syncs { try store.recordFinishing(ids[0], remotePath: "/Photos/a.jpg", bytes: 10, sha256: "ab", durable: false) } == 0)
        #expect(try syncs { try store.complete(ids[0], sha256: "ab", bytes: 10) } == 0)
        try store.recordFinishing(ids[1], remotePath: "/Photos/b.jpg", bytes: 10, sha256: "cd")
        #expect(try syncs { try store.complete(ids[1], sha256: "cd", bytes: 10, verified: true) } > 0)
        #expect(try store.transfer(id: ids[0])?.state == .completed && store.transfer(id: ids[1])?.state == .completed)
    }

    @Test("durable commits from several threads at once each return with their change on the disk, with at most one flush per commit (commits of the same moment may share one)")
    func concurrentDurableCommits() throws {
        let first = try QueueStore(path: path)
        let account = try first.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        let threads = 4, each = 25
        let batches = (0..<threads).map { t in (0..<each).map { i in upload(account, "t\(t)-\(i).jpg") } }
        let path = path
        let n = syncs {
            DispatchQueue.concurrentPerform(iterations: threads) { t in
                guard let store = try? QueueStore(path: path) else { return }
                for transfer in batches[t] { _ = try? store.enqueue([transfer]) }
            }
        }
        #expect(try first.transfers().count == threads * each)
        #expect(n > 0 && n <= threads * each, "\(n) flushes for \(threads * each) commits")
    }

    @Test("a durable step inside a larger transaction (the agent's pass) makes that transaction durable: nothing is flushed before its commit, once after it")
    func nestedDurableStepFlushesTheOuterCommit() throws {
        let (store, ids) = try started("a.jpg", "b.jpg")
        try store.recordFinishing(ids[0], remotePath: "/Photos/a.jpg", bytes: 10, sha256: "ab")
        #expect(try syncs { try store.database.transaction { try store.progress(ids[1], bytesDone: 5) } } == 0, "nothing durable inside")
        var beforeTheCommit = -1
        let n = try syncs {
            try store.database.transaction {
                beforeTheCommit = try syncs {
                    try store.complete(ids[0], sha256: "ab", bytes: 10, verified: true)
                    try store.database.flushLog()
                }
                try store.progress(ids[1], bytesDone: 6)
            }
        }
        #expect(beforeTheCommit == 0, "flushed before the commit: \(beforeTheCommit)")
        #expect(n == 1, "\(n) flushes")
        #expect(try store.transfer(id: ids[0])?.state == .completed)
    }

    @Test("progress checkpoints do not wait for the disk")
    func checkpointsAreNotFlushed() throws {
        let (store, ids) = try started("a.jpg")
        let id = ids[0]
        let n = try syncs {
            for offset in stride(from: Int64(1), through: 50, by: 1) {
                try store.checkpoint(id, offset: offset, hashState: [1, 2, 3], counters: ResumeCounters(), resetAttempts: false)
                try store.progress(id, bytesDone: offset)
            }
        }
        #expect(n == 0, "50 checkpoints flushed the WAL \(n) times")
    }

    @Test("threads sharing a connection: one that asks for a flush inside its transaction while another flushes after its commit both finish")
    func flushInsideATransactionWhileAnotherFlushes() throws {
        let store = try QueueStore(path: path)
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        let each = 200
        let batches = [(0..<each).map { upload(account, "a\($0).jpg") }, (0..<each).map { upload(account, "b\($0).jpg") }]
        DispatchQueue.concurrentPerform(iterations: 2) { t in
            for transfer in batches[t] {
                // One thread's flush is owed by its transaction; the other's runs after its commit.
                if t == 0 {
                    _ = try? store.database.transaction { () throws -> Void in
                        _ = try store.enqueue([transfer])
                        try store.database.flushLog()
                    }
                } else {
                    _ = try? store.enqueue([transfer])
                }
            }
        }
        #expect(try store.transfers().count == 2 * each)
    }
}
