import CLI
import Platform
import Queue
import TestSupport
import Testing

@Suite("Batch figures from the queue")
struct BatchReaderTests {
    /// A queue in a temporary folder with one account.
    final class Scratch {
        let folder = TemporaryFolder("iu-batch")
        let store: QueueStore
        let account: Account
        init() throws {
            store = try QueueStore(path: folder.path + "/queue.sqlite3")
            account = try store.addAccount(name: "alice", webdavURL: "http://127.0.0.1:1/dav/", tusURL: "http://127.0.0.1:1/files/",
                                           username: "alice")
        }

        /// Queues `sizes.count` uploads in one go.
        @discardableResult
        func enqueue(_ sizes: [Int64]) throws -> [Int64] {
            try store.enqueue(sizes.enumerated().map { i, size in
                NewTransfer(direction: .upload, origin: .manual, accountID: account.id, localPath: LocalPath("/tmp/f\(i)"),
                            remotePath: "/f\(i)", bytesTotal: size)
            })
        }

        func complete(_ id: Int64, bytes: Int64) throws {
            try store.start(id, resumedAt: 0)
            try store.complete(id, sha256: nil, bytes: bytes)
        }

        /// Moves a row's times back, as if it was made and finished `minutes` ago.
        func age(_ id: Int64, minutes: Int64) throws {
            let shift = minutes * 60_000
            try store.database.run("""
                UPDATE transfers SET created_at = created_at - ?, started_at = started_at - ?, completed_at = completed_at - ?
                WHERE id = ?
                """, [.int(shift), .int(shift), .int(shift), .int(id)])
        }
    }

    @Test("status names the batch's files taken as they were (three, then how many more), not last week's, and still says all done")
    func takenAsItWas() throws {
        let q = try Scratch()
        let note = "taken as it was after 10 min, though it ends before the picture's end marker (a copy interrupted?): what is sent may be damaged"
        func noted(_ ids: [Int64]) throws {
            for id in ids { try q.store.database.run("UPDATE transfers SET taken_note = ? WHERE id = ?", [.text(note), .int(id)]) }
        }
        let old = try q.enqueue([1_000])
        try noted(old)
        try q.complete(old[0], bytes: 1_000)
        try q.age(old[0], minutes: 60 * 24 * 7)
        let batch = try q.enqueue([1_000, 1_000, 1_000, 1_000, 1_000, 1_000])
        try noted([batch[1]])
        for id in batch { try q.complete(id, bytes: 1_000) }

        var figures = try BatchReader.read(q.store, agentRunning: true)
        #expect(figures.takenAsItWas == 1 && figures.takenAsItWasFirst.map(\.id) == [batch[1]], "last week's is not this batch's")
        #expect(StatusLine.render(figures, agentRunning: true) == "all done: 6 files, 6.0 kB\n#\(batch[1]) f1: " + note)

        try noted(Array(batch[2...]))
        figures = try BatchReader.read(q.store, agentRunning: true)
        let lines = StatusLine.render(figures, agentRunning: true).split(separator: "\n").map(String.init)
        #expect(lines.count == 5 && lines[1...3].allSatisfy { $0.hasSuffix(": " + note) }, "\(lines)")
        #expect(lines.last == "and 2 more files taken as they were (`instant-upload queue` gives each one's note)")
        let json = StatusJSON(summary: try q.store.summary(), batch: figures, agentPID: 1)
        #expect(json.takenAsItWasCount == 5 && json.takenAsItWas.map(\.id) == Array(batch[1...3]) && json.takenAsItWas.first?.note == note)
        #expect(json.takenAsItWas.first?.path == "/tmp/f1")
    }

    @Test("the batch is the rows since the queue was last idle: last week's finished work is not counted")
    func sinceIdle() throws {
        let q = try Scratch()
        for id in try q.enqueue([1_000, 1_000, 1_000]) {
            try q.complete(id, bytes: 1_000)
            try q.age(id, minutes: 60 * 24 * 7)
        }
        let batch = try q.enqueue([10_000, 20_000, 30_000])
        try q.complete(batch[0], bytes: 10_000)
        try q.store.start(batch[1], resumedAt: 0)
        try q.store.progress(batch[1], bytesDone: 5_000)

        let figures = try BatchReader.read(q.store, agentRunning: true)
        #expect(figures.filesTotal == 3)
        #expect(figures.filesDone == 1)
        #expect(figures.bytesTotal == 60_000)
        #expect(figures.bytesDone == 15_000)
        #expect(figures.bytesLeft == 45_000)
        #expect(figures.uploading == 1)
        #expect(figures.waiting == 1)
    }

    @Test("rows added while the batch runs join it; once idle, the figures describe the last batch")
    func growingBatch() throws {
        let q = try Scratch()
        let first = try q.enqueue([1_000])
        let second = try q.enqueue([2_000])  // added while the first still waits
        try q.complete(first[0], bytes: 1_000)
        #expect(try BatchReader.read(q.store, agentRunning: true).filesTotal == 2)
        try q.complete(second[0], bytes: 2_000)
        let done = try BatchReader.read(q.store, agentRunning: true)
        #expect(done.filesDone == 2 && done.filesTotal == 2 && done.bytesDone == 3_000)
        #expect(done.active == 0)
    }

    @Test("the agent's batch_started_at, when it has written one, decides where the batch starts")
    func agentStart() throws {
        let q = try Scratch()
        let old = try q.enqueue([1_000])
        try q.complete(old[0], bytes: 1_000)
        try q.age(old[0], minutes: 10)
        try q.enqueue([2_000])
        #expect(try BatchReader.read(q.store, agentRunning: true).filesTotal == 1)
        try q.store.setAgentValue("batch_started_at", String(nowMilliseconds() - 20 * 60_000))
        #expect(try BatchReader.read(q.store, agentRunning: true).filesTotal == 2)
    }

    @Test("a batch that started after every row is made of the older rows moving again (a retried item)")
    func retriedOldRowIsTheBatch() throws {
        let q = try Scratch()
        let ids = try q.enqueue([1_000, 2_000, 3_000])
        try q.complete(ids[0], bytes: 1_000)
        try q.complete(ids[2], bytes: 3_000)
        try q.store.start(ids[1], resumedAt: 0)
        try q.store.setAgentValue("batch_started_at", String(nowMilliseconds() + 1_000))
        let figures = try BatchReader.read(q.store, agentRunning: true)
        #expect(figures.filesTotal == 1 && figures.bytesTotal == 2_000, "\(figures)")
    }

    @Test("the rate is the agent's: read only while an agent runs and something moves")
    func rate() throws {
        let q = try Scratch()
        let ids = try q.enqueue([10_000_000])
        try q.store.setAgentValue("rate_bytes_per_s", "2000000")
        #expect(try BatchReader.read(q.store, agentRunning: true).rate == nil, "nothing moves")
        try q.store.start(ids[0], resumedAt: 0)
        try q.store.progress(ids[0], bytesDone: 4_000_000)
        let moving = try BatchReader.read(q.store, agentRunning: true)
        #expect(moving.rate == 2_000_000)
        #expect(moving.eta == 3)
        #expect(try BatchReader.read(q.store, agentRunning: false).rate == nil, "a stale rate from an agent that is gone")
        try q.store.setAgentValue("rate_bytes_per_s", "fast")
        #expect(try BatchReader.read(q.store, agentRunning: true).rate == nil)
    }

    @Test("what holds each row: gates, retrying reasons, failures from any batch")
    func held() throws {
        let q = try Scratch()
        let old = try q.enqueue([1])
        try q.store.start(old[0], resumedAt: 0)
        try q.store.fail(old[0], reason: Reason(.quota))
        try q.age(old[0], minutes: 60)
        let ids = try q.enqueue([1, 1, 1, 1, 1])
        try q.store.noteWaiting(ids[0], Reason(.wifi))
        try q.store.noteWaiting(ids[1], Reason(.offline))
        for (id, code) in [(ids[2], ReasonCode.serverBusy), (ids[3], .serverBusy)] {
            try q.store.start(id, resumedAt: 0)
            try q.store.retryLater(id, reason: Reason(code), at: nowMilliseconds() + 10_000, attempts: 1)
        }
        // The reasons of queued rows are read when a Wi-Fi-only account can hold some of them.
        try q.store.addAccount(name: "phone", webdavURL: "http://127.0.0.1:1/dav/", tusURL: "http://127.0.0.1:1/files/",
                               username: "alice", wifiOnly: true)
        let figures = try BatchReader.read(q.store, agentRunning: true)
        #expect(figures.waitingForWiFi == 1)
        #expect(figures.waitingForNetwork == 1)
        #expect(figures.waiting == 1)
        #expect(figures.retrying == [.serverBusy: 2])
        #expect(figures.failed == 1)
        #expect(figures.filesTotal == 5, "the old failure is not part of this batch")

        // Offline with a server on this machine, which is still reached: the rows say what
        // holds them, only those noted offline wait for the network.
        try q.store.setAgentValue("paused_reason", ReasonCode.offline.rawValue)
        let local = try BatchReader.read(q.store, agentRunning: true)
        #expect(local.waitingForNetwork == 1 && local.waitingForWiFi == 1 && local.waiting == 1)

        // Offline with every server elsewhere, the agent holds the whole queue: every queued
        // row waits for the network.
        try q.store.database.run("UPDATE accounts SET webdav_url = 'https://cloud.example.org/dav/', tus_url = 'https://cloud.example.org/files/'")
        let offline = try BatchReader.read(q.store, agentRunning: true)
        #expect(offline.waitingForNetwork == 3)
        #expect(offline.waiting == 0 && offline.waitingForWiFi == 0)
    }

    @Test("without the agent's start, an old row still moving begins the batch unless an older row was still running when it came; read by ID behind a short history and by finishing time behind a long one",
          arguments: [0, 5_000])
    func oldRowStillMoving(history: Int) throws {
        let q = try Scratch()
        if history > 0 {
            // Finished a day ago: never part of this batch, and only there to be skipped.
            let ids = try q.enqueue(Array(repeating: 1, count: history))
            try q.store.database.run("""
                UPDATE transfers SET state = 'completed', bytes_done = 1, created_at = created_at - 86400000, completed_at = created_at - 86000000
                WHERE id <= ?
                """, [.int(ids.last!)])
        }
        let early = try q.enqueue([1_000])
        let old = try q.enqueue([2_000])
        try q.store.start(old[0], resumedAt: 0)
        try q.store.retryLater(old[0], reason: Reason(.serverBusy), at: nowMilliseconds() + 60_000, attempts: 1)
        let newer = try q.enqueue(Array(repeating: 3_000, count: 20))
        for id in newer { try q.complete(id, bytes: 3_000) }
        try q.age(old[0], minutes: 30)

        // The early row finished before the old one came: the batch begins at the old one.
        try q.complete(early[0], bytes: 1_000)
        try q.age(early[0], minutes: 40)
        var figures = try BatchReader.read(q.store, agentRunning: false)
        #expect(figures.filesTotal == 21 && figures.filesDone == 20, "\(figures)")

        // The early row ran on until after the old one came: the batch begins at the early one.
        try q.store.database.run("UPDATE transfers SET completed_at = ? WHERE id = ?", [.int(nowMilliseconds() - 10 * 60_000), .int(early[0])])
        figures = try BatchReader.read(q.store, agentRunning: false)
        #expect(figures.filesTotal == 22 && figures.filesDone == 21, "\(figures)")
    }

    @Test("the agent's batch start is found among many rows, with gaps in the IDs")
    func agentStartAmongMany() throws {
        let q = try Scratch()
        let ids = try q.enqueue(Array(repeating: 1, count: 50))
        let base: Int64 = 1_700_000_000_000
        for (i, id) in ids.enumerated() {
            try q.store.database.run("UPDATE transfers SET created_at = ? WHERE id = ?", [.int(base + Int64(i) * 1_000), .int(id)])
            try q.complete(id, bytes: 1)
        }
        for i in [19, 20, 21] { try q.store.remove(ids[i], by: .clear) }  // a gap right where the batch starts
        for (start, expected) in [(base + 20_500, 28), (base, 47), (base + 49_000, 1), (base + 60_000, 0), (base - 1, 47)] {
            try q.store.setAgentValue("batch_started_at", String(start))
            #expect(try BatchReader.read(q.store, agentRunning: true).filesTotal == expected, "from \(start - base)")
        }
    }
}
