import Platform
import Testing
@testable import Watcher

@Suite("The watch service's inbox")
struct WatchInboxTests {
    @Test("messages count as on their way from posted until handled, taken or not: run --until-idle waits for them")
    func inHandUntilHandled() throws {
        let inbox = try WatchInbox()
        #expect(inbox.isEmpty)
        inbox.post(.status(rule: "cam"))
        #expect(!inbox.isEmpty, "posted, not taken")
        let first = inbox.take()
        #expect(first.messages.count == 1 && !first.stop)
        #expect(!inbox.isEmpty, "taken, not handled: the file may not be in the queue yet")
        inbox.handled()
        #expect(inbox.isEmpty)

        // One posted while the ones taken are handled waits for the next turn.
        inbox.post(.status(rule: "cam"))
        _ = inbox.take()
        inbox.post(.lookAgain)
        inbox.handled()
        #expect(!inbox.isEmpty, "the one posted after the take")
        #expect(inbox.take().messages.count == 1)
        inbox.handled()
        #expect(inbox.isEmpty)

        // A turn with nothing to take leaves nothing in hand.
        #expect(inbox.take().messages.isEmpty)
        #expect(inbox.isEmpty)
        inbox.requestStop()
        #expect(inbox.take().stop && inbox.isEmpty, "a request to stop is not a message on its way")
    }
}
