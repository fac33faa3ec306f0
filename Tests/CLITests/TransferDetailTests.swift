import CLI
import Foundation
import Platform
import Queue
import Testing

@Suite("Transfer detail")
struct TransferDetailTests {
    @Test("show gives the checksum, the upload host only, checkpoint, attempts, reason and resume counters")
    func everything() {
        let row = makeTransfer(id: 17, state: .failed, reason: Reason(.quota), attempts: 3, bytesDone: 13_000_000,
                               bytesTotal: 27_000_000,
                               uploadURL: "https://bob:hunter2@cloud.example.org:8443/files/abc123?token=s3cret#frag",
                               sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
                               checkpointOffset: 13_000_000,
                               counters: ResumeCounters(resumedAt: 8_000_000, bytesRead: 5_000_000, bytesHashed: 5_000_000),
                               startedAt: fixedNow - 30_000)
        let text = TransferDetail.render(row, now: fixedNow, timeZone: utc)
        #expect(text.hasPrefix("#17 IMG_17.jpg\n"))
        #expect(text.contains("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"))
        #expect(text.contains("upload host     cloud.example.org"))
        for secret in ["hunter2", "bob", "s3cret", "abc123", "8443", "frag"] { #expect(!text.contains(secret), "\(secret) leaked") }
        #expect(text.contains("byte 13,000,000"))
        #expect(text.contains("attempts        3"))
        #expect(text.contains("no quota left on server"))
        #expect(text.contains("reason code     quota (needs you)"))
        #expect(text.contains("free space on the server, then `instant-upload retry 17`"))
        #expect(text.contains("this run        from byte 8,000,000: 5,000,000 bytes read, 5,000,000 hashed"))
        #expect(text.contains("from            /home/alice/Pictures/IMG_17.jpg"))
        #expect(text.contains("to              alice:/Photos/IMG_17.jpg"))
        #expect(text.contains("created         2026-11-29 14:02 (1 min ago)"))
    }

    @Test("a download shows the remote file first and the local file it becomes")
    func download() {
        let row = makeTransfer(id: 4, .download, state: .inProgress, local: LocalPath("/home/a/Downloads/Local Drive/r.pdf"),
                               remote: "/Docs/r.pdf", bytesDone: 1_000, bytesTotal: 4_000)
        let text = TransferDetail.render(row, now: fixedNow, speed: 1_000, timeZone: utc)
        #expect(text.contains("from            alice:/Docs/r.pdf"))
        #expect(text.contains("\n  to              /home/a/Downloads/Local Drive/r.pdf\n"))
        #expect(text.contains("\n  partial file    /home/a/Downloads/Local Drive/r.pdf.part\n"))
        let unwrapped = text.replacingOccurrences(of: "\n                  ", with: " ")
        #expect(unwrapped.contains("(1.0 kB of 4.0 kB, 25%), 1.0 kB/s, 3 s left"))
        #expect(!text.contains("sha-256"))
    }

    @Test("a retrying row shows when it is tried next")
    func nextTry() {
        let row = makeTransfer(id: 2, state: .retrying, reason: Reason(.serverBusy), attempts: 2, nextAttemptAt: fixedNow + 12_000)
        let text = TransferDetail.render(row, now: fixedNow, timeZone: utc)
        #expect(text.contains("next try        2026-11-29 14:03 (in 12 s)"))
        #expect(text.contains("reason code     server_busy (retried by itself)"))
    }

    @Test("show gives the library's own words as detail under the sentence the queue shows")
    func detail() {
        let reason = Reason(.connectionReset, "the connection dropped", detail: "Recv failure: Connection reset by peer (curl error 56)")
        let row = makeTransfer(id: 8, state: .retrying, reason: reason, attempts: 1, nextAttemptAt: fixedNow + 1_000)
        let text = TransferDetail.render(row, now: fixedNow, timeZone: utc)
        #expect(text.contains("\n  reason          the connection dropped\n"))
        #expect(text.contains("\n  detail          Recv failure: Connection reset by peer (curl error 56)\n"))
        let queue = QueueView(groups: [.init(state: .retrying, rows: [row])], now: fixedNow).render()
        #expect(!queue.contains("Recv failure"), "the queue keeps to the sentence")
    }
}
