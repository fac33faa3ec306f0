import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing
@testable import Engine

/// The agent's doorbell closes cleanly: never under a thread still in `accept`.
@Suite("The agent's doorbell")
struct ControlSocketTests {
    let folder = TemporaryFolder("iu-doorbell")
    var path: String { folder.path + "/run/agent.sock" }

    @Test("close() wakes the thread waiting in accept and returns only once it has ended; the socket's name goes with it")
    func closeEndsTheAcceptThreadFirst() throws {
        let server = try ControlSocketServer(path: path) { "pong \($0)" }
        server.start()
        // Answered: the accept thread is up, and back to waiting for the next one.
        #expect(ControlSocketClient.send("ping", to: path) == "pong ping")
        server.close()
        #expect(server.acceptLoopEnded, "close() returned while the accept thread could still use the descriptor")
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(ControlSocketClient.send("ping", to: path) == nil)
        server.close() // a second close does nothing: no descriptor is closed twice
    }

    @Test("a client that went away before its answer: the answer is dropped, no SIGPIPE ends the process, and the next client is answered")
    func clientGoneBeforeItsAnswer() throws {
        let asked = DispatchSemaphore(value: 0)
        let gone = DispatchSemaphore(value: 0)
        let server = try ControlSocketServer(path: path) { request in
            if request == "slow" {
                asked.signal()
                gone.wait()
            }
            return "ok"
        }
        server.start()
        defer { server.close() }
        let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = try ControlSocketServer.address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(connected == 0)
        #expect("slow\n".withCString { write(client, $0, 5) } == 5)
        asked.wait()
        close(client)
        gone.signal()
        #expect(ControlSocketClient.send("ping", to: path) == "ok")
    }

    @Test("a request being answered as close() is called gets its answer, and close() returns only after it")
    func closeWaitsForTheRequestBeingAnswered() throws {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let order = Mutex<[String]>([])
        let server = try ControlSocketServer(path: path) { request in
            guard request == "slow" else { return "ok" }
            entered.signal()
            release.wait()
            order.withLock { $0.append("answered") }
            return "answered"
        }
        server.start()
        let reply = Mutex<String?>(nil)
        let answered = DispatchSemaphore(value: 0)
        let path = self.path
        Thread {
            reply.withLock { $0 = ControlSocketClient.send("slow", to: path, timeoutSeconds: 30) }
            answered.signal()
        }.start()
        entered.wait()
        let closed = DispatchSemaphore(value: 0)
        Thread {
            server.close()
            order.withLock { $0.append("closed") }
            closed.signal()
        }.start()
        try Poll.until("close() to begin") { server.isClosing }
        release.signal()
        closed.wait()
        answered.wait()
        #expect(reply.withLock { $0 } == "answered")
        #expect(order.withLock { $0 } == ["answered", "closed"], "close() returned while a request was being answered on the accept thread")
        #expect(server.acceptLoopEnded)
    }
}
