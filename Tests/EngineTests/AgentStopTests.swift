import Foundation
import Glibc
import TestSupport
import Testing

/// `run` stops when asked, whenever it is asked: also in its first moments, before the
/// queue has had a pass.
@Suite("The agent stops when asked")
struct AgentStopTests {
    @Test("SIGTERM or SIGINT as soon as the agent answers, ten times each: it stops every time, without being killed")
    func stopsAtOnce() throws {
        let session = try AgentHarness()
        try session.writeConfig(agentConfig())
        for signal in [SIGTERM, SIGINT] {
            for round in 1...10 {
                try session.startAgent()
                #expect(session.stopAgent(signal: signal), "signal \(signal), round \(round): \(session.agentLog)")
            }
        }
    }
}
