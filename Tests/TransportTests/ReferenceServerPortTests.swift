import Foundation
import Glibc
import TestSupport
import Testing

/// The tests' own reference server, stopped or killed to play a server that is gone: its
/// port must stay its own meanwhile, or a server another test starts could be given it and
/// answer in its place.
@Suite("A reference server that is down keeps its port")
struct ReferenceServerPortTests {
    @Test("stopped or killed, its port is held and refuses connections; started again, it answers there")
    func heldWhileDown() throws {
        let server = try ReferenceServer()
        let port = server.port
        #expect(server.heldPort == nil)
        server.stop()
        #expect(server.heldPort == port)
        #expect(LoopbackPort.connectError(port) == ECONNREFUSED)
        try server.restart()
        #expect(server.port == port)
        #expect(server.heldPort == nil)
        try LoopbackPort.waitUntilListening(port, timeout: 15, what: "the restarted reference server")
        server.kill()
        #expect(server.heldPort == port)
        #expect(LoopbackPort.connectError(port) == ECONNREFUSED)
    }
}
