import Platform
import Queue
import TestSupport
import Testing

/// The scheduler's two questions about retrying rows, asked at every pass: which are due
/// now, and when the next one will be. Both are answered from the retrying rows' own index,
/// by their time, however many rows wait further ahead.
@Suite("Retrying rows as the scheduler reads them")
struct RetryingRowsTests {
    let folder = TemporaryFolder("iu-retrying")

    @Test("due retrying rows start beside the queued ones in their order; the next retry time leaves out the rows due already")
    func dueAndNext() throws {
        let store = try QueueStore(path: folder.path + "/queue.sqlite3")
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: nil, username: "a")
        let ids = try store.enqueue((0..<2_005).map {
            NewTransfer(direction: .upload, origin: .manual, accountID: account.id, localPath: LocalPath("/tmp/\($0).jpg"),
                        remotePath: "/Photos/\($0).jpg", bytesTotal: 10)
        })
        let now = nowMilliseconds()
        // 2,000 rows failing each on its own, a minute or more ahead; two due; three queued.
        let due = [ids[3], ids[1_500]]
        for (n, id) in ids.prefix(2_000).enumerated() {
            _ = try store.start(id, resumedAt: 0)
            try store.retryLater(id, reason: Reason(.timeout), at: due.contains(id) ? now - 5 : now + 60_000 + Int64(n), attempts: 1)
        }
        let queued = Array(ids.suffix(5))
        #expect(try store.runnable(direction: .upload, now: now, limit: 10).map(\.id) == due + queued)
        #expect(try store.runnable(direction: .upload, now: now, limit: 2).map(\.id) == due)
        #expect(try store.nextRetryTime(after: now) == now + 60_000)
        #expect(try store.nextRetryTime(after: now - 10) == now - 5)

        // Started, completed or queued again, a row leaves the index with its state.
        _ = try store.start(ids[0], resumedAt: 0)
        #expect(try store.nextRetryTime(after: now) == now + 60_001)
        for id in due { _ = try store.start(id, resumedAt: 0); try store.complete(id, sha256: nil, bytes: 10) }
        #expect(try store.runnable(direction: .upload, now: now, limit: 10).map(\.id) == queued)
        #expect(try store.nextRetryTime(after: now - 10) == now + 60_001)
    }
}
