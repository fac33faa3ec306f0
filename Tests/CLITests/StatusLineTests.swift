import CLI
import Queue
import Testing

@Suite("Status line")
struct StatusLineTests {
    func summary(uploads: [TransferState: Int] = [:], downloads: [TransferState: Int] = [:], paused: String? = nil) throws -> QueueSummary {
        try makeSummary(uploads: uploads, downloads: downloads, paused: paused)
    }

    @Test("says how many of how many are uploaded and how many need attention")
    func uploadsOnly() throws {
        let s = try summary(uploads: [.completed: 12, .failed: 2, .queued: 20, .inProgress: 3, .retrying: 3])
        #expect(StatusLine.render(s, agentRunning: true) == "12 of 40 uploaded, 2 need attention")
    }

    @Test("adds downloads when there are any")
    func withDownloads() throws {
        let s = try summary(uploads: [.completed: 12, .failed: 2, .queued: 26], downloads: [.completed: 1, .queued: 2])
        #expect(StatusLine.render(s, agentRunning: true) == "12 of 40 uploaded, 1 of 3 downloaded, 2 need attention")
        #expect(StatusLine.render(try summary(downloads: [.completed: 1, .failed: 1]), agentRunning: true)
                == "1 of 2 downloaded, 1 needs attention")
    }

    @Test("leaves out attention when nothing failed")
    func nothingFailed() throws {
        #expect(StatusLine.render(try summary(uploads: [.completed: 40]), agentRunning: true) == "40 of 40 uploaded")
    }

    @Test("an empty queue says nothing queued")
    func empty() throws {
        #expect(StatusLine.render(try summary(), agentRunning: true) == "nothing queued")
    }

    @Test("a paused queue says why on a second line")
    func paused() throws {
        let s = try summary(uploads: [.queued: 3], paused: "offline")
        #expect(StatusLine.render(s, agentRunning: true) == "0 of 3 uploaded\npaused: waiting for network")
        let custom = try summary(uploads: [.queued: 3], paused: "metered\nconnection")
        #expect(StatusLine.render(custom, agentRunning: true) == "0 of 3 uploaded\npaused: metered\\nconnection")
    }

    @Test("an agent that is not running is named, with the command that starts it")
    func agentDown() throws {
        let s = try summary(uploads: [.queued: 3], paused: "wifi")
        #expect(StatusLine.render(s, agentRunning: false) == """
            0 of 3 uploaded
            paused: waiting for Wi-Fi
            the agent is not running: start it with `instant-upload run`
            """)
    }
}
