import Desktop
import Testing

@Suite("Notification wording")
struct WordingTests {
    typealias Item = AttentionBatch.Item

    @Test("two failed uploads: the count, then the first file and its reason")
    func twoUploads() throws {
        let batch = try #require(AttentionBatch([
            Item(fileName: "IMG_0042.jpg", reason: "no quota left on server"),
            Item(fileName: "IMG_0043.jpg", reason: "no quota left on server"),
        ]))
        #expect(batch.line == "2 uploads need attention: IMG_0042.jpg - no quota left on server")
        #expect(batch.summary == "2 uploads need attention")
        #expect(batch.body == "IMG_0042.jpg - no quota left on server\nand 1 more")
    }

    @Test("one item reads in the singular, with no 'and more'")
    func oneItem() throws {
        let batch = try #require(AttentionBatch([Item(fileName: "report.pdf", reason: "the folder is gone on the server", direction: .download)]))
        #expect(batch.summary == "1 download needs attention")
        #expect(batch.body == "report.pdf - the folder is gone on the server")
        #expect(batch.line == "1 download needs attention: report.pdf - the folder is gone on the server")
    }

    @Test("many items: 'and N more'; uploads and downloads together are transfers")
    func manyMixed() throws {
        let items = [Item(fileName: "a.jpg", reason: "log in again", direction: .upload)]
            + (1...11).map { Item(fileName: "f\($0).bin", reason: "timed out", direction: .download) }
        let batch = try #require(AttentionBatch(items))
        #expect(batch.summary == "12 transfers need attention")
        #expect(batch.body == "a.jpg - log in again\nand 11 more")
    }

    @Test("an empty batch says nothing")
    func empty() {
        #expect(AttentionBatch([]) == nil)
        #expect(UploadedBatch(count: 0, firstNames: [], account: "home", folder: "/Photos") == nil)
    }

    @Test("Retry is offered only when retrying can help")
    func retryOffered() throws {
        let hopeless = try #require(AttentionBatch([Item(fileName: "gone.jpg", reason: "the file is gone", canRetry: false)]))
        #expect(!hopeless.offersRetry)
        #expect(hopeless.notification.actions.isEmpty)
        let mixed = try #require(AttentionBatch([Item(fileName: "gone.jpg", reason: "the file is gone", canRetry: false),
                                                 Item(fileName: "a.jpg", reason: "no quota left on server")]))
        #expect(mixed.notification.actions == [.retry])
        #expect(mixed.notification.urgency == .critical)
        #expect(mixed.notification.category == "transfer.error")
    }

    @Test("a file name cannot break the layout with control characters")
    func controlCharacters() throws {
        let batch = try #require(AttentionBatch([Item(fileName: "evil\nname.jpg", reason: "no quota left on server")]))
        #expect(batch.body == "evil\\nname.jpg - no quota left on server")
    }

    @Test("a manual batch that arrived: '3 files uploaded to home:/Photos'")
    func uploadedBatch() throws {
        let three = try #require(UploadedBatch(count: 3, firstNames: ["a.jpg", "b.jpg", "c.jpg"], account: "home", folder: "/Photos"))
        #expect(three.line == "3 files uploaded to home:/Photos")
        #expect(three.body == "a.jpg, b.jpg, c.jpg")
        #expect(three.notification.summary == "3 files uploaded to home:/Photos")
        #expect(three.notification.category == "transfer.complete")

        let one = try #require(UploadedBatch(count: 1, firstNames: ["IMG_0042.jpg"], account: "home", folder: "Photos"))
        #expect(one.line == "IMG_0042.jpg uploaded to home:/Photos")
        #expect(one.body == "")

        let five = try #require(UploadedBatch(count: 5, firstNames: ["1", "2", "3", "4", "5"], account: "work", folder: "/"))
        #expect(five.line == "5 files uploaded to work:/")
        #expect(five.body == "1, 2, 3 and 2 more")

        // As the agent keeps a long batch: its count and the first names.
        let card = try #require(UploadedBatch(count: 10_000, firstNames: ["a.jpg", "b.jpg", "c.jpg"], account: "home", folder: "/Photos"))
        #expect(card.line == "10,000 files uploaded to home:/Photos")
        #expect(card.body == "a.jpg, b.jpg, c.jpg and 9,997 more")
    }
}
