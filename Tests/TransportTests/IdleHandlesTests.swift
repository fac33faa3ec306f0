import TestSupport
import Testing
@testable import Transport

@Suite("libcurl handles kept between sessions")
struct IdleHandlesTests {
    @Test("the next session takes the handle of one that logged in, and is sent without its credentials")
    func nothingCarriedOver() throws {
        let server = try ReferenceServer()
        let folder = HTTPRequest(method: "PROPFIND", url: server.webdavURL(), headers: [("Depth", "0")])
        let handles = IdleHandles(keeping: 1)
        do {
            let alice = HTTPSession(credentials: Credentials(username: "alice", password: "wonderland"), handles: handles)
            #expect(try alice.perform(folder).status == 207)
        }
        #expect(handles.count == 1, "the ended session's handle is kept")
        let anonymous = HTTPSession(handles: handles)
        #expect(try anonymous.perform(folder).status == 401)
        #expect(handles.count == 0, "the next session took it")
        let wrong = HTTPSession(credentials: Credentials(username: "alice", password: "not her password"), handles: handles)
        #expect(try wrong.perform(folder).status == 401, "a new handle: the kept one is in use")
    }

    @Test("no more handles are kept than asked; the rest are cleaned up")
    func keepsAtMost() throws {
        let server = try ReferenceServer()
        let folder = HTTPRequest(method: "PROPFIND", url: server.webdavURL(), headers: [("Depth", "0")])
        let handles = IdleHandles(keeping: 2)
        do {
            let sessions = (0..<3).map { _ in HTTPSession(credentials: Credentials(username: "alice", password: "wonderland"), handles: handles) }
            for session in sessions { #expect(try session.perform(folder).status == 207) }
        }
        #expect(handles.count == 2)
    }
}
