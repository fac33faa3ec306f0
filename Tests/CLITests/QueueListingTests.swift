@testable import CLI
import Foundation
import Glibc
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

    @Test("a long list handed on as it is read (to standard output, which takes it at once) is the same text as the list said whole")
    func handedOnAsWhole() throws {
        let folder = TemporaryFolder("iu-listing")
        let store = try QueueStore(path: folder.path + "/queue.sqlite3")
        let account = try store.addAccount(name: "alice", webdavURL: "http://127.0.0.1:1/dav/", tusURL: nil, username: "alice")
        try store.enqueue((0..<3_000).map { i in
            NewTransfer(direction: .upload, origin: .manual, accountID: account.id,
                        localPath: LocalPath("/tmp/photo \(i).jpg"), remotePath: "/Photos/photo \(i).jpg", bytesTotal: 10)
        })
        let summary = try store.summary()
        let whole = try QueueCommands.render(store: store, summary: summary, header: "header", state: .queued, width: 80)
        #expect(whole.utf8.count > 2 * EagerOutput.gathered, "long enough to be handed on in pieces")
        let path = folder.path + "/out.txt"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        let eager = EagerOutput(fd: fd)
        let rest = try QueueCommands.render(store: store, summary: summary, header: "header", state: .queued, width: 80, eager: eager)
        let handedOn = try String(contentsOfFile: path, encoding: .utf8)
        eager.finish()
        close(fd)
        #expect(!handedOn.isEmpty && rest.utf8.count < EagerOutput.gathered, "handed on while read: \(handedOn.utf8.count) bytes, \(rest.utf8.count) left")
        #expect(handedOn + rest == whole)
    }
}
