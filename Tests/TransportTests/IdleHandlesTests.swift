import TestSupport
import Testing
@testable import Transport

@Suite("libcurl handles kept between sessions")
struct IdleHandlesTests {
    @Test("a session after one that logged in is sent without its credentials: a kept handle carries nothing over")
    func nothingCarriedOver() throws {
        let server = try ReferenceServer()
        let folder = HTTPRequest(method: "PROPFIND", url: server.webdavURL(), headers: [("Depth", "0")])
        for _ in 0..<10 {
            do {
                // Ends here, giving its handle back for the next session to take.
                let alice = HTTPSession(credentials: Credentials(username: "alice", password: "wonderland"))
                #expect(try alice.perform(folder).status == 207)
            }
            let anonymous = HTTPSession()
            #expect(try anonymous.perform(folder).status == 401)
            let wrong = HTTPSession(credentials: Credentials(username: "alice", password: "not her password"))
            #expect(try wrong.perform(folder).status == 401)
        }
    }
}
