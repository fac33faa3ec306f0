import Foundation
import TestSupport
import Testing
import Transport

@Suite("Nextcloud Login Flow v2 against the reference server")
struct LoginFlowTests {
    @Test("the login waits for the person's approval and gives an app password that works, once")
    func approve() throws {
        let server = try ReferenceServer(arguments: ["--path-prefix", "/cloud"], face: .nextcloud)
        let flow = try LoginFlow(address: server.baseURL + "/cloud/")
        let pending = try flow.start()
        #expect(pending.loginURL.hasPrefix(server.baseURL + "/cloud/index.php/login/v2/flow/"))
        #expect(try flow.poll(pending) == nil)
        #expect(!pending.description.contains(pending.token))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { try? server.approveLogin(loginURL: pending.loginURL) }
        let approval = try flow.waitForApproval(pending, every: 0.1, timeout: 20, cancellation: CancellationFlag())
        #expect(approval.loginName == "alice" && approval.appPassword != "wonderland" && !approval.appPassword.isEmpty)
        #expect(!approval.description.contains(approval.appPassword))
        #expect(try flow.poll(pending) == nil) // handed out only once
        // The app password is a login of its own.
        let found = try ServerDiscovery(address: server.baseURL + "/cloud",
                                        credentials: Credentials(username: approval.loginName, password: approval.appPassword)).discover()
        #expect(found.uploadProtocol == .nextcloudChunking)
    }

    @Test("waiting is bounded and a cancel stops it at once")
    func boundedAndCancellable() throws {
        let server = try ReferenceServer(face: .nextcloud)
        let flow = try LoginFlow(address: server.baseURL)
        let pending = try flow.start()
        let timedOut = #expect(throws: TransportError.self) {
            try flow.waitForApproval(pending, every: 0.1, timeout: 0.5, cancellation: CancellationFlag())
        }
        #expect(timedOut?.kind == .timeout)
        let flag = CancellationFlag()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { flag.cancel() }
        let started = Date()
        let cancelled = #expect(throws: TransportError.self) {
            try flow.waitForApproval(pending, every: 30, timeout: 600, cancellation: flag)
        }
        #expect(cancelled?.kind == .cancelled)
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test("a server without Login Flow v2 is an HTTP error at the start")
    func notOffered() throws {
        let server = try ReferenceServer(face: .webdav)
        let error = #expect(throws: HTTPStatusError.self) { try LoginFlow(address: server.baseURL).start() }
        #expect(error?.status == 404 && error?.step == .login)
    }
}
