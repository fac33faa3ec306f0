import Foundation
import Glibc
import Platform
import Queue
import TestSupport
import Testing

@Suite("What transfers record to find their way back")
struct ResumeRecordTests {
    let folder = TemporaryFolder("iu-queue")

    func makeStore() throws -> (QueueStore, Account) {
        let store = try QueueStore(path: folder.path + "/state/queue.sqlite3")
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        return (store, account)
    }

    func uploads(_ account: Account, _ remotePaths: [String], store: QueueStore) throws -> [Int64] {
        try store.enqueue(remotePaths.enumerated().map { i, remote in
            NewTransfer(direction: .upload, origin: .manual, accountID: account.id, localPath: LocalPath("/tmp/f\(i)"),
                        remotePath: remote, bytesTotal: 10)
        })
    }

    @Test("two new rows for one name: the older keeps it, the newer must move aside")
    func olderKeepsTheName() throws {
        let (store, account) = try makeStore()
        let ids = try uploads(account, ["/P/a.jpg", "/P/a.jpg"], store: store)
        #expect(try store.claimRemotePath(ids[1], "/P/a.jpg", accountID: account.id, claimants: .olderOrStarted) == false)
        #expect(try store.claimRemotePath(ids[0], "/P/a.jpg", accountID: account.id, claimants: .olderOrStarted))
        #expect(try store.claimRemotePath(ids[1], "/P/a (1).jpg", accountID: account.id))
        #expect(try store.transfer(id: ids[1])?.remotePath == "/P/a (1).jpg")
        #expect(try store.claimRemotePath(ids[0], "/P/a (1).jpg", accountID: account.id) == false, "a name taken by any row is taken")
    }

    @Test("a row already sending to a name keeps it from any other, older or not")
    func startedKeepsTheName() throws {
        let (store, account) = try makeStore()
        let ids = try uploads(account, ["/P/b.jpg", "/P/b.jpg"], store: store)
        try store.setUpload(ids[1], url: "http://127.0.0.1:1/files/x", expiresAt: nil)
        #expect(try store.claimRemotePath(ids[0], "/P/b.jpg", accountID: account.id, claimants: .olderOrStarted) == false)
    }

    @Test("a direct PUT claims its name with the record of the file it makes: refused, with nothing recorded, while an older row is headed there; then it keeps the name from that row")
    func claimedWithTheRecord() throws {
        let (store, account) = try makeStore()
        let ids = try uploads(account, ["/P/d.jpg", "/P/d.jpg"], store: store)
        _ = try store.start(ids[1], resumedAt: 0)
        #expect(try store.recordFinishing(ids[1], remotePath: "/P/d.jpg", bytes: 10, sha256: nil, claimingFor: account.id) == false)
        #expect(try store.transfer(id: ids[1])?.finishing == false, "nothing recorded")
        _ = try store.start(ids[0], resumedAt: 0)
        try store.fail(ids[0], reason: Reason(.integrity))
        #expect(try store.recordFinishing(ids[1], remotePath: "/P/d.jpg", bytes: 10, sha256: nil, claimingFor: account.id))
        #expect(try store.transfer(id: ids[1])?.finishing == true)
        let newer = try uploads(account, ["/P/d.jpg"], store: store)[0]
        #expect(try store.claimRemotePath(newer, "/P/d.jpg", accountID: account.id, claimants: .olderOrStarted) == false,
                "the file being made holds the name")
    }

    @Test("a name another upload completed at after this row's attempt began is taken (its look at the target may have come just before); one completed before is not")
    func completedSinceTheAttemptBegan() throws {
        let (store, account) = try makeStore()
        let ids = try uploads(account, ["/P/e.jpg", "/P/e.jpg", "/P/e.jpg"], store: store)
        _ = try store.start(ids[0], resumedAt: 0)
        try store.complete(ids[0], sha256: nil, bytes: 10)
        usleep(2_000)
        _ = try store.start(ids[2], resumedAt: 0)
        #expect(try store.claimRemotePath(ids[2], "/P/e.jpg", accountID: account.id, claimants: .olderOrStarted) == false,
                "the older, still queued")
        _ = try store.start(ids[1], resumedAt: 0)
        try store.complete(ids[1], sha256: nil, bytes: 10)
        #expect(try store.recordFinishing(ids[2], remotePath: "/P/e.jpg", bytes: 10, sha256: nil, claimingFor: account.id) == false,
                "made since this attempt began")
        try store.fail(ids[2], reason: Reason(.integrity))
        try store.retry([ids[2]])
        usleep(2_000)
        _ = try store.start(ids[2], resumedAt: 0)
        #expect(try store.recordFinishing(ids[2], remotePath: "/P/e.jpg", bytes: 10, sha256: nil, claimingFor: account.id),
                "both completed before this attempt began: its look at the target tells")
    }

    @Test("finished rows claim nothing; restarts count up until the person retries")
    func finishedRowsAndRestarts() throws {
        let (store, account) = try makeStore()
        let ids = try uploads(account, ["/P/c.jpg", "/P/c.jpg"], store: store)
        _ = try store.start(ids[0], resumedAt: 0)
        try store.complete(ids[0], sha256: nil, bytes: 10)
        #expect(try store.claimRemotePath(ids[1], "/P/c.jpg", accountID: account.id))
        _ = try store.start(ids[1], resumedAt: 0)
        #expect(try store.countRestart(ids[1]) == 1)
        #expect(try store.countRestart(ids[1]) == 2)
        try store.fail(ids[1], reason: Reason(.integrity))
        try store.retry([ids[1]])
        _ = try store.start(ids[1], resumedAt: 0)
        #expect(try store.countRestart(ids[1]) == 1, "a retry by the person starts the count again")
    }
}
