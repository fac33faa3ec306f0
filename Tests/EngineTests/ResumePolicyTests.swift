import Engine
import Queue
import Testing

/// The whole upload resume policy as a table: what the file says × what the row says ×
/// what the server says → the step. A change to any rule changes a line here.
@Suite("The upload resume policy")
struct ResumePolicyTests {
    typealias P = ResumePolicy
    static let size: Int64 = 1000

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var file: P.File
        var row: P.Row
        var server: P.Server
        /// The offset the row's checkpoint says the server confirmed.
        var confirmed: Int64 = 0
        var expected: P.Step
        var testDescription: String { name }
    }

    static let table: [Case] = [
        // What the file says.
        Case(name: "changed 1 s ago: waits the rest of the settle time", file: .changed(stillFor: 1), row: .upload(expiryPassed: false),
             server: .notAsked, expected: .waitForFile(seconds: 4)),
        Case(name: "changed just now, no upload yet: waits too", file: .changed(stillFor: 0), row: .noUpload,
             server: .notAsked, expected: .waitForFile(seconds: 5)),
        Case(name: "changed and still since: its old upload is given up and it starts again",
             file: .changed(stillFor: 6), row: .upload(expiryPassed: false), server: .notAsked,
             expected: .restart(Reason(.sourceChanged), abandon: true)),
        Case(name: "changed and still since, even when the server holds all of the old version",
             file: .changed(stillFor: 6), row: .upload(expiryPassed: false), server: .holds(offset: size, length: size),
             expected: .restart(Reason(.sourceChanged), abandon: true)),
        Case(name: "changed before anything was sent: just a new upload", file: .changed(stillFor: 60), row: .noUpload,
             server: .notAsked, expected: .lookAtTarget),
        Case(name: "changed, and a program still has it open for writing: waits, whatever the server holds",
             file: .beingWritten, row: .upload(expiryPassed: false), server: .holds(offset: size, length: size),
             expected: .waitForFile(seconds: 5)),
        Case(name: "changed, still open for writing, nothing sent yet: waits", file: .beingWritten, row: .noUpload,
             server: .notAsked, expected: .waitForFile(seconds: 5)),

        // What the row says.
        Case(name: "no upload yet: look at the target first", file: .unchanged, row: .noUpload, server: .notAsked,
             expected: .lookAtTarget),
        Case(name: "an upload: ask the server before anything", file: .unchanged, row: .upload(expiryPassed: false),
             server: .notAsked, expected: .ask),
        Case(name: "an upload whose stored expiry has passed: ask, never discard", file: .unchanged,
             row: .upload(expiryPassed: true), server: .notAsked, expected: .ask),

        // What the server says.
        Case(name: "holds a prefix: send from its offset", file: .unchanged, row: .upload(expiryPassed: false),
             server: .holds(offset: 400, length: size), expected: .send(from: 400)),
        Case(name: "holds a prefix and the expiry had passed: still send from its offset", file: .unchanged,
             row: .upload(expiryPassed: true), server: .holds(offset: 400, length: nil), expected: .send(from: 400)),
        Case(name: "holds nothing yet: send from zero", file: .unchanged, row: .upload(expiryPassed: false),
             server: .holds(offset: 0, length: size), expected: .send(from: 0)),
        Case(name: "holds every byte: finish without sending", file: .unchanged, row: .upload(expiryPassed: false),
             server: .holds(offset: size, length: size), expected: .finish),
        Case(name: "forgot it (404): start again, saying so", file: .unchanged, row: .upload(expiryPassed: false),
             server: .forgotten(expired: false), expected: .restart(Reason(.uploadLost), abandon: false)),
        Case(name: "let it expire (410): start again, saying so", file: .unchanged, row: .upload(expiryPassed: true),
             server: .forgotten(expired: true), expected: .restart(Reason(.uploadExpired), abandon: false)),
        Case(name: "an upload of another length: given up and started again", file: .unchanged, row: .upload(expiryPassed: false),
             server: .holds(offset: 10, length: 999),
             expected: .restart(Reason(.uploadLost, "the server's upload is for 999 bytes, the file has 1000; started again"), abandon: true)),
        Case(name: "an offset beyond the file: given up and started again", file: .unchanged, row: .upload(expiryPassed: false),
             server: .holds(offset: 1001, length: nil),
             expected: .restart(Reason(.uploadLost, "the server holds 1001 bytes of a 1000-byte file; started again"), abandon: true)),
        Case(name: "holds less than it confirmed (restored from a backup): go back to what it holds, saying so",
             file: .unchanged, row: .upload(expiryPassed: false), server: .holds(offset: 200, length: size), confirmed: 600,
             expected: .goBack(to: 200, Reason(.uploadLost, "the server holds 200 bytes of the upload, fewer than the 600 it had confirmed (it may have been restored from a backup); sending again from there"))),
        Case(name: "holds exactly what it confirmed: send from there", file: .unchanged, row: .upload(expiryPassed: false),
             server: .holds(offset: 600, length: size), confirmed: 600, expected: .send(from: 600)),
    ]

    @Test("each combination of file, row and server leads to its one step", arguments: table)
    func step(_ c: Case) {
        let facts = P.Facts(file: c.file, row: c.row, server: c.server, size: Self.size, confirmed: c.confirmed)
        #expect(P.next(facts, settleSeconds: 5) == c.expected)
    }

    @Test("a stored expiry never changes a decision: only the server's answer does")
    func expiryIsOnlyAReasonToAsk() {
        let servers: [P.Server] = [.notAsked, .holds(offset: 0, length: nil), .holds(offset: 500, length: 1000),
                                   .holds(offset: 1000, length: 1000), .forgotten(expired: false), .forgotten(expired: true)]
        for server in servers {
            let fresh = P.next(P.Facts(file: .unchanged, row: .upload(expiryPassed: false), server: server, size: 1000))
            let passed = P.next(P.Facts(file: .unchanged, row: .upload(expiryPassed: true), server: server, size: 1000))
            #expect(fresh == passed, "server \(server)")
        }
    }
}
