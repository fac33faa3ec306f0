import Platform
import Queue
import Testing
@testable import Engine

@Suite("The done notice of a batch sent by hand")
struct DoneByHandTests {
    func upload(_ id: Int64, _ remotePath: String, account: String = "home", newVersionOf: String? = nil) -> Transfer {
        Transfer(id: id, direction: .upload, accountName: account, localPath: LocalPath("/home/alice/\(id).jpg"), remotePath: remotePath,
                 state: .completed, newVersionOf: newVersionOf)
    }

    @Test("10,000 uploads into one folder keep a count and three names, not the rows; each folder on its own, by account and folder; a conflicted copy apart; a download not told")
    func countsAndAFewNames() {
        var done = DoneByHand()
        #expect(done.isEmpty)
        done.add(Transfer(id: 1, direction: .download, localPath: LocalPath("/home/alice/Downloads/a.pdf"), remotePath: "/Docs/a.pdf", state: .completed))
        #expect(done.isEmpty, "a download is not told")
        for i in 1...10_000 { done.add(upload(Int64(i), "/Photos/IMG_\(i).jpg")) }
        done.add(upload(20_001, "/Work/report.odt", account: "work"))
        done.add(upload(20_002, "/Docs/notes (conflicted copy).txt", newVersionOf: "/Docs/notes.txt"))
        done.add(upload(20_003, "/Docs/plan.txt", newVersionOf: "/Docs/plan.txt"))
        let places = done.places.map { "\($0.account):\($0.folder) \($0.count) \($0.firstNames)" }
        #expect(places == ["home:/Docs 1 [\"plan.txt\"]",
                           "home:/Photos 10000 [\"IMG_1.jpg\", \"IMG_2.jpg\", \"IMG_3.jpg\"]",
                           "work:/Work 1 [\"report.odt\"]"])
        #expect(done.conflictedCopies.map(\.id) == [20_002])
    }
}
