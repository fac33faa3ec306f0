import CLI
import Foundation
import Platform
import Queue
import Testing

@Suite("queue --follow into a pipe")
struct QueueChangesTests {
    typealias Entry = QueueChanges.Entry

    @Test("a new row, a state change, a new reason and each tenth of progress make a line; nothing else does")
    func whatChanges() {
        let before: [Int64: Entry] = [
            1: Entry(state: .inProgress, bytesDone: 100, bytesTotal: 1_000),
            2: Entry(state: .queued),
            3: Entry(state: .retrying, reasonCode: "timeout", reasonMessage: "the server did not answer for 30 s"),
            4: Entry(state: .inProgress, bytesDone: 100, bytesTotal: 1_000),
            5: Entry(state: .queued),
        ]
        let after: [Int64: Entry] = [
            1: Entry(state: .inProgress, bytesDone: 150, bytesTotal: 1_000),  // same tenth: quiet
            2: Entry(state: .inProgress, bytesTotal: 1_000),
            3: Entry(state: .retrying, reasonCode: "server_busy", reasonMessage: "the server is busy (429)"),
            4: Entry(state: .inProgress, bytesDone: 200, bytesTotal: 1_000),
            6: Entry(state: .queued),
        ]
        let (changed, gone) = QueueChanges.changed(from: before, to: after)
        #expect(changed == [2, 3, 4, 6])
        #expect(gone == [5])
        #expect(QueueChanges.changed(from: after, to: after).changed.isEmpty)
    }

    @Test("each line has the time, the row and what happened in words")
    func lines() {
        let at = fixedNow
        func line(_ row: Transfer) -> String { QueueChanges.line(row, now: at, timeZone: utc) }
        #expect(line(makeTransfer(id: 17, state: .inProgress, bytesDone: 11_000_000, bytesTotal: 27_000_000))
                == "14:03:07 #17 IMG_17.jpg: uploading, 40%, 11 MB of 27 MB")
        #expect(line(makeTransfer(id: 17, state: .inProgress, bytesDone: 27_000_000, bytesTotal: 27_000_000))
                == "14:03:07 #17 IMG_17.jpg: all 27 MB sent, finishing on the server")
        #expect(line(makeTransfer(id: 18, state: .retrying, reason: Reason(.connectionReset), nextAttemptAt: at + 12_000))
                == "14:03:07 #18 IMG_18.jpg: retrying in 12 s: the connection dropped")
        #expect(line(makeTransfer(id: 19, state: .failed, reason: Reason(.quota)))
                == "14:03:07 #19 IMG_19.jpg: failed: no quota left on server (quota); free space on the server, then `instant-upload retry 19`")
        #expect(line(makeTransfer(id: 20, state: .completed)) == "14:03:07 #20 IMG_20.jpg: uploaded as alice:/Photos/IMG_20.jpg")
        #expect(line(makeTransfer(id: 21, reason: Reason(.wifi))) == "14:03:07 #21 IMG_21.jpg: waiting for Wi-Fi")
        #expect(QueueChanges.goneLine(22, now: at, timeZone: utc) == "14:03:07 #22: removed from the queue")
    }
}
