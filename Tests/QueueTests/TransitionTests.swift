import Platform
import Queue
import TestSupport
import Testing

@Suite("The state machine")
struct TransitionTests {
    static let legal: Set<String> = [
        "queued>in_progress",
        "in_progress>completed", "in_progress>retrying", "in_progress>failed", "in_progress>queued",
        "retrying>in_progress", "retrying>queued",
        "failed>queued",
    ]

    @Test("allows exactly the designed transitions, over the whole table", arguments: TransferState.allCases)
    func wholeTable(from: TransferState) throws {
        for to in TransferState.allCases {
            let key = "\(from.rawValue)>\(to.rawValue)"
            if Self.legal.contains(key) {
                #expect(try from.moving(to: to) == to, "\(key) should be allowed")
            } else {
                #expect(throws: IllegalTransition(from: from, to: to), "\(key) should be refused") { try from.moving(to: to) }
            }
        }
    }

    @Test("a completed transfer never moves again")
    func completedIsFinal() {
        for to in TransferState.allCases { #expect(!TransferState.completed.canMove(to: to)) }
    }

    @Test("transient reasons retry, permanent ones fail")
    func reasonKinds() {
        for code in [ReasonCode.offline, .timeout, .connectionReset, .serverError, .serverBusy, .maintenance, .checksumMismatch] {
            #expect(code.isTransient, "\(code)")
        }
        for code in [ReasonCode.auth, .rejectedByServer, .targetMissing, .sourceMissing, .tooLarge, .quota, .protocol, .integrity] {
            #expect(!code.isTransient, "\(code)")
        }
        for code in ReasonCode.allCases {
            #expect(!code.defaultMessage.isEmpty && !code.defaultAction.isEmpty)
        }
    }
}

@Suite("Removal and bulk moves go through the table")
struct RemovalTests {
    static let removable: Set<String> = [
        "cancel:queued", "cancel:in_progress", "cancel:retrying", "cancel:failed",
        "clear:completed", "clear:failed",
        "account_removed:queued", "account_removed:in_progress", "account_removed:retrying", "account_removed:completed",
        "account_removed:failed",
    ]

    @Test("removes exactly the designed rows, over the whole table", arguments: TransferState.Removal.allCases)
    func wholeTable(removal: TransferState.Removal) throws {
        for state in TransferState.allCases {
            let key = "\(removal.rawValue):\(state.rawValue)"
            if Self.removable.contains(key) {
                #expect(throws: Never.self, "\(key) should be allowed") { try state.removing(by: removal) }
            } else {
                #expect(throws: IllegalTransition(from: state, removedBy: removal), "\(key) should be refused") { try state.removing(by: removal) }
            }
        }
    }

    let folder = TemporaryFolder("iu-removal")

    func makeStore() throws -> (QueueStore, Account) {
        let store = try QueueStore(path: folder.path + "/queue.sqlite3")
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        return (store, account)
    }

    func enqueue(_ store: QueueStore, _ account: Account, _ count: Int, origin: Origin = .manual) throws -> [Int64] {
        try store.enqueue((0..<count).map {
            NewTransfer(direction: .upload, origin: origin, accountID: account.id, localPath: LocalPath("/tmp/\($0)"), remotePath: "/P/\($0)")
        })
    }

    @Test("cancel never removes a completed transfer, neither by request nor by removal")
    func cancelKeepsCompleted() throws {
        let (store, account) = try makeStore()
        let id = try enqueue(store, account, 1)[0]
        try store.start(id, resumedAt: 0)
        try store.complete(id, sha256: nil, bytes: 1)
        try store.requestCancel([id])
        #expect(try store.transfer(id: id)?.cancelRequested == false)
        #expect(throws: IllegalTransition(from: .completed, removedBy: .cancel)) { try store.remove(id, by: .cancel) }
        #expect(try store.transfer(id: id)?.state == .completed)
    }

    @Test("a cancelled row that is queued, running, retrying or failed is removed")
    func cancelRemovesWhatIsNotDone() throws {
        let (store, account) = try makeStore()
        let ids = try enqueue(store, account, 4)
        try store.start(ids[1], resumedAt: 0)
        try store.start(ids[2], resumedAt: 0); try store.retryLater(ids[2], reason: Reason(.timeout), at: 0, attempts: 1)
        try store.start(ids[3], resumedAt: 0); try store.fail(ids[3], reason: Reason(.quota))
        for id in ids { #expect(try store.remove(id, by: .cancel)) }
        #expect(try store.transfers().isEmpty)
    }

    @Test("taking back abandoned rows moves only those in progress, at their checkpoints")
    func recoveryMovesOnlyRunningRows() throws {
        let (store, account) = try makeStore()
        let ids = try enqueue(store, account, 3)
        try store.start(ids[0], resumedAt: 0)
        try store.checkpoint(ids[0], offset: 4, hashState: nil, counters: ResumeCounters(), resetAttempts: false)
        try store.progress(ids[0], bytesDone: 6)
        try store.start(ids[1], resumedAt: 0); try store.fail(ids[1], reason: Reason(.quota))
        #expect(try store.recoverAbandoned() == 1)
        #expect(try store.transfers().map(\.state) == [.queued, .failed, .queued])
        #expect(try store.transfer(id: ids[0])?.bytesDone == 4)
    }

    @Test("pausing the queue sends waiting rows back to queued with the reason; finished rows keep theirs")
    func pauseMovesWaitingRows() throws {
        let (store, account) = try makeStore()
        let ids = try enqueue(store, account, 3)
        try store.start(ids[0], resumedAt: 0); try store.retryLater(ids[0], reason: Reason(.timeout), at: nowMilliseconds() + 60_000, attempts: 2)
        try store.start(ids[1], resumedAt: 0); try store.fail(ids[1], reason: Reason(.quota))
        try store.pauseAllWaiting(reason: Reason(.offline))
        let rows = try store.transfers()
        #expect(rows.map(\.state) == [.queued, .failed, .queued])
        #expect(rows.map { $0.reason?.code } == [.offline, .quota, .offline])
        #expect(rows[0].attempts == 2 && rows[0].nextAttemptAt == nil)
    }

    @Test("a gate that spares an account (its server is on this machine) leaves that account's rows as they were")
    func pauseSparesAccounts() throws {
        let (store, remote) = try makeStore()
        let local = try store.addAccount(name: "here", webdavURL: "http://127.0.0.1:2/dav/a/", tusURL: nil, username: "a")
        let far = try enqueue(store, remote, 1)
        let near = try enqueue(store, local, 2)
        try store.start(near[0], resumedAt: 0)
        let later = nowMilliseconds() + 60_000
        try store.retryLater(near[0], reason: Reason(.timeout), at: later, attempts: 1)
        try store.pauseAllWaiting(reason: Reason(.offline), sparing: [local.id])
        #expect(try store.transfer(id: far[0])?.reason?.code == .offline)
        let retrying = try #require(try store.transfer(id: near[0]))
        #expect(retrying.state == .retrying && retrying.nextAttemptAt == later && retrying.reason?.code == .timeout)
        #expect(try store.transfer(id: near[1])?.reason == nil)
    }

    @Test("removing an account takes every one of its rows, and only its rows")
    func accountRemoval() throws {
        let (store, account) = try makeStore()
        let other = try store.addAccount(name: "work", webdavURL: "http://127.0.0.1:1/dav/b/", tusURL: "http://127.0.0.1:1/files/", username: "b")
        let ids = try enqueue(store, account, 3)
        let kept = try enqueue(store, other, 1)
        try store.start(ids[0], resumedAt: 0); try store.complete(ids[0], sha256: nil, bytes: 1)
        try store.start(ids[1], resumedAt: 0)
        #expect(try store.removeAccount(named: "home"))
        #expect(try store.transfers().map(\.id) == kept)
        #expect(try store.accounts().map(\.name) == ["work"])
    }
}
