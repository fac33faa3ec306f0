import Foundation
import Glibc
import TestSupport
import Testing

/// `run` stops when asked, whenever it is asked: also in its first moments, before the
/// queue has had a pass.
@Suite("The agent stops when asked")
struct AgentStopTests {
    /// SIGTERM and SIGINT as bits of a `/proc` signal mask.
    static let stopSignals: UInt64 = 1 << (SIGTERM - 1) | 1 << (SIGINT - 1)

    @Test("every thread of a running agent holds SIGTERM and SIGINT, and none ignores them: one sent before its signal sources armed waits for them")
    func stopSignalsAreHeld() async throws {
        try await offThePool {
            let session = try AgentHarness()
            try session.startAgent()
            defer { session.stopAgent() }
            let threads = try ThreadStats.signalMasks(of: String(try #require(session.agentPID)))
            #expect(threads.count > 1)
            for thread in threads {
                #expect(thread.blocked & Self.stopSignals == Self.stopSignals, "\(thread.thread) takes a stop signal itself")
                #expect(thread.ignored & Self.stopSignals == 0, "\(thread.thread): a stop signal is ignored")
            }
        }
    }

    @Test("SIGTERM or SIGINT as soon as the agent answers, five times each: it stops by itself every time, with exit status 0")
    func stopsAtOnce() async throws {
        try await offThePool {
            let session = try AgentHarness()
            for signal in [SIGTERM, SIGINT] {
                for round in 1...5 {
                    try session.startAgent()
                    #expect(session.stopAgent(signal: signal), "signal \(signal), round \(round): \(session.agentLog)")
                }
            }
        }
    }
}
