import CLI
import Queue
import Testing

@Suite("Status line")
struct StatusLineTests {
    @Test("says what moves, what is held and why, then files and bytes of the batch, the rate and the time left")
    func batchLine() {
        let b = makeBatch(uploading: 3, waiting: 264, retrying: [.serverBusy: 2], failed: 1, files: (30, 300),
                          bytes: (120_000_000, 193_000_000), rate: 14_000_000)
        #expect(StatusLine.render(b, agentRunning: true)
                == "3 uploading, 264 waiting, 2 retrying (server busy), 1 failed; 30 of 300 files, 120 MB of 193 MB, 14 MB/s, about 6 s left")
    }

    @Test("without a rate from the agent, the rate and the time left are left out rather than guessed")
    func noRate() {
        let b = makeBatch(uploading: 1, waiting: 4, files: (2, 7), bytes: (1_500_000, 9_000_000))
        #expect(StatusLine.render(b, agentRunning: true) == "1 uploading, 4 waiting; 2 of 7 files, 1.5 MB of 9.0 MB")
    }

    @Test("retrying rows held for different reasons count each reason")
    func mixedRetrying() {
        let b = makeBatch(retrying: [.serverBusy: 2, .connectionReset: 1, .timeout: 1], files: (0, 4), bytes: (0, 4_000))
        #expect(StatusLine.render(b, agentRunning: true)
                == "4 retrying (2 server busy, 1 connection dropped, 1 no answer); 0 of 4 files, 0 B of 4.0 kB")
    }

    @Test("a server that does not answer while the network is up is said in the rows' words, never 'no network'")
    func unreachable() {
        let b = makeBatch(retrying: [.unreachable: 2], files: (0, 2), bytes: (0, 2_000))
        #expect(StatusLine.render(b, agentRunning: true) == "2 retrying (cannot reach the server); 0 of 2 files, 0 B of 2.0 kB")
        #expect(ReasonCode.unreachable.defaultMessage == "cannot reach the server")
    }

    @Test("rows held by a gate say which: the network, Wi-Fi, or the person's pause")
    func gates() {
        var b = makeBatch(waiting: 1, files: (0, 6), bytes: (0, 6_000))
        b.waitingForNetwork = 2; b.waitingForWiFi = 2; b.paused = 1
        #expect(StatusLine.render(b, agentRunning: true)
                == "1 waiting, 2 waiting for network, 2 waiting for Wi-Fi, 1 paused by you; 0 of 6 files, 0 B of 6.0 kB")
    }

    @Test("rows a watch rule holds for mains power say so, and watch troubles follow the line")
    func watchRules() {
        var b = makeBatch(waiting: 1, files: (0, 4), bytes: (0, 4_000))
        b.waitingForPower = 3
        #expect(StatusLine.render(b, agentRunning: true, watch: ["card: the folder /media/card is not there; watching resumes by itself"])
                == "1 waiting, 3 waiting for mains power; 0 of 4 files, 0 B of 4.0 kB\nwatch card: the folder /media/card is not there; watching resumes by itself")
    }

    @Test("downloads are named as such")
    func downloads() {
        let b = makeBatch(uploading: 1, downloading: 2, files: (0, 3), bytes: (0, 3_000), rate: 1_000)
        #expect(StatusLine.render(b, agentRunning: true) == "1 uploading, 2 downloading; 0 of 3 files, 0 B of 3.0 kB, 1.0 kB/s, about 3 s left")
    }

    @Test("a finished batch says all done with its size; a failed item keeps the line on what needs you")
    func finished() {
        #expect(StatusLine.render(makeBatch(files: (300, 300), bytes: (193_000_000, 193_000_000)), agentRunning: true)
                == "all done: 300 files, 193 MB")
        #expect(StatusLine.render(makeBatch(failed: 1, files: (299, 300), bytes: (190_000_000, 193_000_000), rate: 5_000_000),
                                  agentRunning: true) == "1 failed; 299 of 300 files, 190 MB of 193 MB")
    }

    @Test("an empty queue says nothing queued")
    func empty() {
        #expect(StatusLine.render(BatchFigures(), agentRunning: true) == "nothing queued")
    }

    @Test("a paused queue says why on a second line")
    func paused() {
        let b = makeBatch(waiting: 3, files: (0, 3))
        #expect(StatusLine.render(b, pausedReason: "offline", agentRunning: true) == "3 waiting; 0 of 3 files\npaused: waiting for network")
        #expect(StatusLine.render(b, pausedReason: "metered\nconnection", agentRunning: true)
                == "3 waiting; 0 of 3 files\npaused: metered\\nconnection")
    }

    @Test("the person's pause of the whole queue says so, and how to lift it")
    func pausedByYou() {
        var b = makeBatch(files: (0, 3))
        b.paused = 3
        #expect(StatusLine.render(b, pausedReason: "paused", agentRunning: true)
                == "3 paused by you; 0 of 3 files\npaused by you: nothing starts until `instant-upload resume --all`")
    }

    @Test("an agent that is not running is named, with the command that starts it")
    func agentDown() {
        #expect(StatusLine.render(makeBatch(waiting: 3, files: (0, 3)), pausedReason: "wifi", agentRunning: false) == """
            3 waiting; 0 of 3 files
            paused: waiting for Wi-Fi
            the agent is not running: start it with `instant-upload run`
            """)
    }

    @Test("big counts are grouped by thousands")
    func grouped() {
        let b = makeBatch(uploading: 3, waiting: 29_972, failed: 7_905, files: (1_751, 39_631), bytes: (11_000_000_000, 18_000_000_000))
        #expect(StatusLine.render(b, agentRunning: true) == "3 uploading, 29,972 waiting, 7,905 failed; 1,751 of 39,631 files, 11 GB of 18 GB")
    }
}
