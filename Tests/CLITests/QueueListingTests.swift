@testable import CLI
import Platform
import Queue
import TestSupport
import Testing

@Suite("One state listed in full")
struct QueueListingTests {
    @Test("queue --state S, written as its rows are read, is the view of the same rows read whole: ID column, places in line, reasons")
    func streamedAsWhole() throws {
        let folder = TemporaryFolder("iu-listing")
        let store = try QueueStore(path: folder.path + "/queue.sqlite3")
        let account = try store.addAccount(name: "alice", webdavURL: "http://127.0.0.1:1/dav/", tusURL: nil, username: "alice")
        // Queued IDs of one to three digits, failed ones of one (a column as wide as the table's
        // largest ID would be too wide), both directions: each direction has its own line.
        let ids = try store.enqueue((0..<120).map { i in
            NewTransfer(direction: i % 3 == 0 ? .download : .upload, origin: .manual, accountID: account.id,
                        localPath: LocalPath("/tmp/f\(i).jpg"), remotePath: "/Photos/f\(i).jpg", bytesTotal: 10)
        })
        for id in [ids[4], ids[7]] {
            _ = try store.start(id, resumedAt: 0)
            try store.fail(id, reason: Reason(.rejectedByServer, "the server refused the file (403)"))
        }
        let summary = try store.summary()
        for state in [TransferState.queued, .failed] {
            let streamed = try QueueCommands.render(store: store, summary: summary, header: "header", state: state, width: 80)
            let whole = QueueView(groups: [.init(state: state, rows: try store.transfers(state: state))], now: 0, width: 80,
                                  rowsPerGroup: nil).render()
            #expect(streamed == "header\n\n" + whole)
        }
        #expect(try QueueCommands.render(store: store, summary: summary, header: "header", state: .retrying, width: 80) == "nothing retrying")
        #expect(try store.largestID(state: .failed) == ids[7])
        #expect(try store.largestID(state: .retrying) == nil)
    }
}
