import Platform
import Queue
import TestSupport
import Testing

/// The person's pause as the queue keeps it: a durable hold per row and for the whole queue,
/// changed only through the transition table, never taken by the scheduler.
@Suite("Pause and resume in the queue")
struct PauseStoreTests {
    let folder = TemporaryFolder("iu-pause")
    var path: String { folder.path + "/state/queue.sqlite3" }

    func makeStore() throws -> (QueueStore, Account) {
        let store = try QueueStore(path: path)
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        return (store, account)
    }

    func uploads(_ store: QueueStore, _ account: Account, _ count: Int) throws -> [Int64] {
        try store.enqueue((0..<count).map {
            NewTransfer(direction: .upload, origin: .manual, accountID: account.id, localPath: LocalPath("/tmp/\($0).jpg"),
                        remotePath: "/Photos/\($0).jpg", bytesTotal: 10)
        })
    }

    func runnable(_ store: QueueStore) throws -> [Int64] {
        try store.runnable(direction: .upload, now: nowMilliseconds() + 60_000, limit: 100).map(\.id)
    }

    @Test("a paused row waits as queued with the reason paused, and the scheduler never takes it until resumed")
    func pausedRowIsNeverRunnable() throws {
        let (store, account) = try makeStore()
        let ids = try uploads(store, account, 3)
        #expect(try store.pause([ids[0]]).map(\.kind) == ["changed"])
        let row = try #require(try store.transfer(id: ids[0]))
        #expect(row.state == .queued && row.paused && row.reason?.code == .paused && row.reason?.message == "paused by you")
        #expect(try runnable(store) == [ids[1], ids[2]])
        #expect(try store.start(ids[0], resumedAt: 0) == nil, "a row paused after the scheduler picked it is not started")
        #expect(try store.transfer(id: ids[0])?.state == .queued)

        #expect(try store.resume([ids[0]]).count == 1)
        let resumed = try #require(try store.transfer(id: ids[0]))
        #expect(!resumed.paused && resumed.reason == nil && resumed.state == .queued)
        #expect(try runnable(store) == ids)
    }

    @Test("a retrying row goes back to queued when paused; a running one is only marked, for the agent to stop")
    func retryingAndRunning() throws {
        let (store, account) = try makeStore()
        let ids = try uploads(store, account, 2)
        try store.start(ids[0], resumedAt: 0)
        try store.retryLater(ids[0], reason: Reason(.serverBusy), at: nowMilliseconds() - 1, attempts: 1)
        try store.start(ids[1], resumedAt: 0)
        _ = try store.pause(ids)
        let retrying = try #require(try store.transfer(id: ids[0]))
        #expect(retrying.state == .queued && retrying.paused && retrying.nextAttemptAt == nil && retrying.reason?.code == .paused)
        let running = try #require(try store.transfer(id: ids[1]))
        #expect(running.state == .inProgress && running.paused)
        #expect(try store.pauseRequested() == [ids[1]])
        // The agent's clean stop keeps the checkpoint and says why it waits.
        try store.requeue(ids[1], reason: Reason(.paused))
        #expect(try store.transfer(id: ids[1])?.state == .queued)
        #expect(try store.pauseRequested().isEmpty)
        #expect(try runnable(store).isEmpty)
    }

    @Test("a row paused while no agent ran it stays paused when the next agent takes it back")
    func survivesRecovery() throws {
        let (store, account) = try makeStore()
        let ids = try uploads(store, account, 2)
        for id in ids {
            try store.start(id, resumedAt: 0)
            try store.checkpoint(id, offset: 4, hashState: nil, counters: ResumeCounters(), resetAttempts: false)
        }
        _ = try store.pause([ids[0]])
        #expect(try store.recoverAbandoned() == 2)
        let paused = try #require(try store.transfer(id: ids[0]))
        #expect(paused.state == .queued && paused.paused && paused.reason?.code == .paused && paused.checkpoint.offset == 4)
        let other = try #require(try store.transfer(id: ids[1]))
        #expect(other.state == .queued && !other.paused && other.reason == nil)
        #expect(try runnable(store) == [ids[1]])
        // Reopened, as by an agent started later: still paused.
        let again = try QueueStore(path: path)
        #expect(try again.transfer(id: ids[0])?.paused == true)
    }

    @Test("completed, failed, cancelled and unknown rows are neither paused nor resumed; a paused one twice is unchanged")
    func notMoving() throws {
        let (store, account) = try makeStore()
        let ids = try uploads(store, account, 4)
        try store.start(ids[0], resumedAt: 0)
        try store.complete(ids[0], sha256: nil, bytes: 10)
        try store.start(ids[1], resumedAt: 0)
        try store.fail(ids[1], reason: Reason(.quota))
        try store.requestCancel([ids[2]])
        let changes = try store.pause([ids[0], ids[1], ids[2], 99])
        #expect(changes.map(\.kind) == ["notMoving", "notMoving", "notMoving", "missing"])
        #expect(try store.resume([ids[0], ids[1], 99]).map(\.kind) == ["notMoving", "notMoving", "missing"])
        #expect(try store.pause([ids[3]]).map(\.kind) == ["changed"])
        #expect(try store.pause([ids[3]]).map(\.kind) == ["unchanged"])
        #expect(try store.resume([ids[3]]).map(\.kind) == ["changed"])
        #expect(try store.resume([ids[3]]).map(\.kind) == ["unchanged"])
    }

    @Test("the whole queue's pause is kept in the database: waiting rows and new ones say so until resume --all")
    func wholeQueue() throws {
        let (store, account) = try makeStore()
        let ids = try uploads(store, account, 2)
        _ = try store.pause([ids[0]])
        #expect(try store.pauseQueue())
        #expect(try !store.pauseQueue(), "already paused")
        let later = try uploads(store, account, 1)
        let reopened = try QueueStore(path: path)
        #expect(try reopened.isQueuePaused())
        #expect(try reopened.summary().pausedReason == "paused")
        #expect(try reopened.transfer(id: later[0])?.reason?.code == .paused, "a new item says it waits for the person")
        #expect(try reopened.transfer(id: ids[1])?.reason == Reason.queuePaused)
        #expect(try reopened.transfer(id: ids[0])?.reason == Reason(.paused), "a row paused on its own keeps its own words")
        // An agent's gate coming and going leaves the person's notes alone.
        try store.pauseAllWaiting(reason: Reason(.offline))
        try store.clearWaiting(code: .offline)
        try store.hold(.account(account.id), reason: Reason(.credentials))
        #expect(try store.transfer(id: ids[0])?.reason == Reason(.paused))
        try store.release(.account(account.id))
        try store.clearWaiting(code: .credentials)

        let resumed = try store.resumeQueue()
        #expect(resumed.queueWasPaused && resumed.rows == 1)
        #expect(try !store.isQueuePaused())
        for id in ids + later {
            let row = try #require(try store.transfer(id: id))
            #expect(!row.paused && row.reason == nil, "#\(id)")
        }
        #expect(try runnable(store) == ids + later)
        let again = try store.resumeQueue()
        #expect(!again.queueWasPaused && again.rows == 0)
    }

    @Test("a failed row retried by the person is no longer paused")
    func retryClearsPause() throws {
        let (store, account) = try makeStore()
        let id = try uploads(store, account, 1)[0]
        try store.start(id, resumedAt: 0)
        _ = try store.pause([id])
        try store.fail(id, reason: Reason(.quota))
        try store.retry([id])
        #expect(try store.transfer(id: id)?.paused == false)
        #expect(try runnable(store) == [id])
    }

    @Test("paused rows count as work ahead, but not as work that moves by itself")
    func idleness() throws {
        let (store, account) = try makeStore()
        let ids = try uploads(store, account, 1)
        _ = try store.pause(ids)
        #expect(try !store.isIdle())
        #expect(try store.isIdle(countingPaused: false))
        #expect(try store.summary().pausedRows == 1)
        #expect(try store.summary().waitingForAgent == 0)
    }
}

extension QueueStore.PauseChange {
    var kind: String {
        switch self {
        case .changed: "changed"
        case .unchanged: "unchanged"
        case .notMoving: "notMoving"
        case .missing: "missing"
        }
    }
}
