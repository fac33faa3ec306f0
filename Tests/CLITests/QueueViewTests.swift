import CLI
import Platform
import Queue
import Testing

@Suite("Queue view")
struct QueueViewTests {
    func lines(_ text: String) -> [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    @Test("a thousand queued rows show ten, a count, and the command that shows the rest")
    func summarisesLongGroups() {
        let rows = (1...1000).map { makeTransfer(id: Int64($0)) }
        // The caller fetches LIMIT 10 and the count; giving it all thousand must read the same.
        for given in [Array(rows.prefix(10)), rows] {
            let text = QueueView(groups: [.init(state: .queued, rows: given, total: 1000)], now: fixedNow, timeZone: utc).render()
            let out = lines(text)
            #expect(out[0] == "Queued (1000)")
            #expect(out.filter { $0.contains("waiting its turn") }.count == 10)
            #expect(out.last == "  … and 990 more (instant-upload queue --state queued)")
            #expect(text.contains("waiting its turn (#10)"))
            #expect(!text.contains("#11 "))
        }
    }

    @Test("one group in full shows every row and no hint")
    func fullGroup() {
        let rows = (1...1000).map { makeTransfer(id: Int64($0)) }
        let text = QueueView(groups: [.init(state: .queued, rows: rows)], now: fixedNow, rowsPerGroup: nil).render()
        #expect(lines(text).filter { $0.contains("waiting its turn") }.count == 1000)
        #expect(text.contains("waiting its turn (#1000)"))
        #expect(!text.contains("more"))
    }

    @Test("groups come in a fixed order with their counts, and empty ones are left out")
    func groupOrder() {
        let groups: [QueueView.Group] = [
            .init(state: .completed, rows: [makeTransfer(id: 1, state: .completed, completedAt: fixedNow)], total: 35),
            .init(state: .failed, rows: [makeTransfer(id: 2, state: .failed, reason: Reason(.quota))]),
            .init(state: .queued, rows: [makeTransfer(id: 3)], total: 990),
            .init(state: .retrying, rows: []),
            .init(state: .inProgress, rows: [makeTransfer(id: 4, state: .inProgress, bytesTotal: 10)], total: 3),
        ]
        let headers = lines(QueueView(groups: groups, now: fixedNow).render()).filter { !$0.hasPrefix(" ") && !$0.isEmpty }
        #expect(headers == ["In progress (3)", "Queued (990)", "Failed (1)", "Completed (35)"])
    }

    @Test("an empty queue says so")
    func empty() {
        #expect(QueueView(groups: [], now: fixedNow).render() == "nothing queued")
        #expect(QueueView(groups: [.init(state: .failed, rows: [])], now: fixedNow, rowsPerGroup: nil).render() == "nothing failed")
        #expect(QueueView(groups: [.init(state: .inProgress, rows: [])], now: fixedNow).render() == "nothing in progress")
    }

    @Test("an upload in progress shows its folder with the account, a bar, percent, speed and time left")
    func inProgress() {
        let row = makeTransfer(id: 17, state: .inProgress, bytesDone: 13_500_000, bytesTotal: 27_000_000)
        let text = QueueView(groups: [.init(state: .inProgress, rows: [row])], now: fixedNow,
                             speeds: [17: 1_500_000]).render()
        let out = lines(text)
        #expect(out[1] == "  #17 IMG_17.jpg to alice:/Photos")
        #expect(out[2].hasPrefix("      [###############---------------]  50%  14 MB of 27 MB, 1.5 MB/s, 9 s left"))
    }

    @Test("a download in progress names the remote folder it comes from; without a speed there is no ETA")
    func downloadInProgress() {
        let row = makeTransfer(id: 5, .download, state: .inProgress, local: LocalPath("/home/a/Downloads/Local Drive/r.pdf"),
                               remote: "/Documents/Reports/r.pdf", bytesDone: 0, bytesTotal: 4_000)
        let out = lines(QueueView(groups: [.init(state: .inProgress, rows: [row])], now: fixedNow).render())
        #expect(out[1] == "  #5 r.pdf from alice:/Documents/Reports")
        #expect(out[2].contains("0%  0 B of 4.0 kB"))
        #expect(!out[2].contains("left"))
    }

    @Test("a retrying row says why, which attempt, and when the next try is")
    func retrying() {
        let row = makeTransfer(id: 18, state: .retrying, reason: Reason(.connectionReset), attempts: 3,
                               nextAttemptAt: fixedNow + 12_000)
        let text = QueueView(groups: [.init(state: .retrying, rows: [row])], now: fixedNow).render()
        #expect(text.contains("the connection dropped; attempt 3, next try in 12 s"))
    }

    @Test("a queued row says what it waits for: the network, Wi-Fi, or its turn among its direction")
    func queuedReasons() {
        let rows = [
            makeTransfer(id: 1, reason: Reason(.wifi)),
            makeTransfer(id: 2),
            makeTransfer(id: 3, .download, remote: "/d/x.pdf"),
            makeTransfer(id: 4, reason: Reason(.sourceChanged)),
        ]
        let out = lines(QueueView(groups: [.init(state: .queued, rows: rows)], now: fixedNow).render())
        #expect(out[2] == "     waiting for Wi-Fi")
        #expect(out[4] == "     waiting its turn (#2)")
        #expect(out[6] == "     waiting its turn (#1)")
        #expect(out[8] == "     changed while uploading, started again; waiting its turn (#3)")
    }

    @Test("a row paused part way shows how far it got, as a retrying one does")
    func pausedProgress() {
        let rows = [makeTransfer(id: 1, reason: Reason(.paused), bytesDone: 12_000_000, bytesTotal: 27_000_000),
                    makeTransfer(id: 2, reason: Reason(.paused), bytesTotal: 27_000_000)]
        let out = lines(QueueView(groups: [.init(state: .queued, rows: rows)], now: fixedNow).render())
        #expect(out[2] == "     paused by you; resumes at 12 MB of 27 MB", "\(out)")
        #expect(out[4] == "     paused by you", "nothing sent yet, nothing to say: \(out)")
    }

    @Test("a failed row gives its own reason and the command that fixes it, with its ID")
    func failed() {
        let rows = [makeTransfer(id: 21, state: .failed, reason: Reason(.quota)),
                    makeTransfer(id: 22, state: .failed, reason: Reason(.targetMissing))]
        let text = QueueView(groups: [.init(state: .failed, rows: rows)], now: fixedNow).render()
        #expect(text.contains("no quota left on server (quota)"))
        #expect(text.contains("free space on the server, then `instant-upload retry 21`"))
        #expect(text.contains("choose a new folder: `instant-upload retry 22 --to DIR`"))
        #expect(!text.contains(" ID"))
    }

    @Test("completed uploads say where the file is on the server; downloads name the local file")
    func completed() {
        let up = makeTransfer(id: 9, state: .completed, completedAt: fixedNow)
        let down = makeTransfer(id: 10, .download, state: .completed,
                                local: LocalPath("/home/a/Downloads/Local Drive/report (1).pdf"), remote: "/Docs/report.pdf",
                                completedAt: fixedNow)
        let text = QueueView(groups: [.init(state: .completed, rows: [up, down])], now: fixedNow, timeZone: utc).render()
        #expect(text.contains("uploaded 2026-11-29 14:03 as alice:/Photos/IMG_9.jpg"))
        #expect(text.contains("downloaded 2026-11-29 14:03 to /home/a/Downloads/Local Drive/report (1).pdf"))
    }

    @Test("names with newlines, escape sequences and bad bytes are escaped, never printed raw")
    func escapesNames() {
        let evil: [UInt8] = Array("/home/a/evil\n\u{1b}[2J".utf8) + [0xff] + Array(".jpg".utf8)
        let rows = [makeTransfer(id: 1, state: .failed, local: LocalPath(bytes: evil), remote: "/Ph\u{1b}]0;x\u{07}otos/a.jpg",
                                 account: "al\nice", reason: Reason(.quota, "quota \u{1b}[31mgone"))]
        let text = QueueView(groups: [.init(state: .failed, rows: rows)], now: fixedNow).render()
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        #expect(!text.unicodeScalars.contains { $0.value == 0x7f || (0x80...0x9f).contains($0.value) })
        #expect(text.contains("evil\\n\\x1b[2J\\xff.jpg"))
        #expect(text.contains("al\\nice:/Ph\\x1b]0;x\\x07otos"))
        // header, name, reason, action, and the note on the name the server stores: no line was broken by the name
        #expect(lines(text).count == 5)
        #expect(lines(text)[4] == "     note: named a.jpg on the server, which takes only UTF-8 names")
    }

    @Test("a photo a watch rule took as it was says so under its row, in show and in its JSON, beside the note on its name")
    func takenAsItWas() throws {
        let why = "taken as it was after 10 min, though it ends before the picture's end marker (a copy interrupted?): what is sent may be damaged"
        var row = makeTransfer(id: 7, state: .completed, completedAt: fixedNow - 1_000)
        row.takenNote = why
        let text = QueueView(groups: [.init(state: .completed, rows: [row])], now: fixedNow).render()
        #expect(lines(text).last == "     note: " + why, "\(text)")
        #expect(TransferDetail.render(row, now: fixedNow, width: 400).contains("  note            " + why + "\n"))
        #expect(TransferJSON(row).note == why)
        row.localPath = LocalPath(bytes: Array("/p/a".utf8) + [0xff] + Array(".jpg".utf8))
        #expect(TransferJSON(row).note == "named IMG_7.jpg on the server, which takes only UTF-8 names; " + why)
        #expect(lines(QueueView(groups: [.init(state: .completed, rows: [row])], now: fixedNow).render()).suffix(2)
                == ["     note: named IMG_7.jpg on the server, which takes only UTF-8 names", "     note: " + why])
    }

    @Test("long names are cut in the middle to fit the terminal width")
    func fitsWidth() {
        let long = String(repeating: "very-long-name-", count: 10) + "end.jpg"
        let row = makeTransfer(id: 123, state: .queued, local: LocalPath("/p/" + long), remote: "/Photos/2026/November/Holiday/" + long)
        for width in [40, 60, 80, 120] {
            let text = QueueView(groups: [.init(state: .queued, rows: [row])], now: fixedNow, width: width).render()
            for line in lines(text) { #expect(line.count <= width, "\(width): \(line)") }
            #expect(text.contains("end.jpg"))
            #expect(text.contains("…"))
        }
    }

    @Test("an upload whose bytes are all sent says the server is finishing it, not a full bar that seems stuck")
    func finishingOnServer() {
        let up = makeTransfer(id: 3, state: .inProgress, bytesDone: 471_000, bytesTotal: 471_000)
        let down = makeTransfer(id: 4, .download, state: .inProgress, remote: "/d/r.pdf", bytesDone: 9_000, bytesTotal: 9_000)
        let text = QueueView(groups: [.init(state: .inProgress, rows: [up, down])], now: fixedNow, speeds: [3: 0, 4: 0]).render()
        #expect(text.contains("\n     all 471 kB sent, finishing on the server\n"))
        #expect(text.hasSuffix("\n     all 9.0 kB received, finishing"))
        #expect(!text.contains("100%"))
        #expect(!text.contains("stalled"), "waiting for the server is not a stall")
    }

    @Test("a retrying upload with every byte sent says the server is finishing the file, not `resumes at 471 kB of 471 kB`")
    func retryingAllSent() {
        let done = makeTransfer(id: 5, state: .retrying, reason: Reason(.timeout), attempts: 1, nextAttemptAt: fixedNow + 2_000,
                                bytesDone: 471_000, bytesTotal: 471_000)
        let half = makeTransfer(id: 6, state: .retrying, reason: Reason(.timeout), attempts: 1, nextAttemptAt: fixedNow + 2_000,
                                bytesDone: 200_000, bytesTotal: 471_000)
        let text = QueueView(groups: [.init(state: .retrying, rows: [done, half])], now: fixedNow, width: 200).render()
        #expect(text.contains("next try in 2 s; all 471 kB sent, the server is finishing the file"))
        #expect(text.contains("next try in 2 s; resumes at 200 kB of 471 kB"))
        #expect(!text.contains("resumes at 471 kB"))
    }

    @Test("a row that stopped moving reads stalled; a moving one gets its rate and time left")
    func stalledAndMoving() {
        let rows = [makeTransfer(id: 1, state: .inProgress, bytesDone: 100, bytesTotal: 1_000),
                    makeTransfer(id: 2, state: .inProgress, bytesDone: 100, bytesTotal: 1_000)]
        let text = QueueView(groups: [.init(state: .inProgress, rows: rows)], now: fixedNow, speeds: [1: 0, 2: 300]).render()
        #expect(text.contains("100 B of 1.0 kB, stalled"))
        #expect(text.contains("100 B of 1.0 kB, 300 B/s, 3 s left"))
    }
}
