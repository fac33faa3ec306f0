import Queue
import Testing

@Suite("The state machine")
struct TransitionTests {
    static let legal: Set<String> = [
        "queued>in_progress",
        "in_progress>completed", "in_progress>retrying", "in_progress>failed", "in_progress>queued",
        "retrying>in_progress", "retrying>queued",
        "failed>queued",
    ]

    @Test("allows exactly the designed transitions, over the whole table", arguments: TransferState.allCases)
    func wholeTable(from: TransferState) throws {
        for to in TransferState.allCases {
            let key = "\(from.rawValue)>\(to.rawValue)"
            if Self.legal.contains(key) {
                #expect(try from.moving(to: to) == to, "\(key) should be allowed")
            } else {
                #expect(throws: IllegalTransition(from: from, to: to), "\(key) should be refused") { try from.moving(to: to) }
            }
        }
    }

    @Test("a completed transfer never moves again")
    func completedIsFinal() {
        for to in TransferState.allCases { #expect(!TransferState.completed.canMove(to: to)) }
    }

    @Test("transient reasons retry, permanent ones fail")
    func reasonKinds() {
        for code in [ReasonCode.offline, .timeout, .connectionReset, .serverError, .serverBusy, .maintenance, .checksumMismatch] {
            #expect(code.isTransient, "\(code)")
        }
        for code in [ReasonCode.auth, .rejectedByServer, .targetMissing, .sourceMissing, .tooLarge, .quota, .protocol, .integrity] {
            #expect(!code.isTransient, "\(code)")
        }
        for code in ReasonCode.allCases {
            #expect(!code.defaultMessage.isEmpty && !code.defaultAction.isEmpty)
        }
    }
}
