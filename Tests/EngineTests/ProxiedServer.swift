import Foundation
import Queue
import TestSupport
import Testing
import Transport

/// A server of one kind behind a holding proxy, and a person whose account `home` reaches
/// it through the proxy (so a test can hold what the agent sends, and count it), while the
/// test itself talks to the server straight (`dav`, `directRoot`). The agent is not started.
struct ProxiedServer {
    let running: ServerKind.Running
    let proxy: HoldingProxy
    let session: AgentHarness
    /// The account's WebDAV root, straight to the server.
    let directRoot: String
    /// A WebDAV client on `directRoot`, as another device of the same person.
    let dav: WebDAVClient

    init(_ kind: ServerKind, hold: HoldingProxy.Hold?) throws {
        running = try ServerKind.Running(kind)
        var address = try #require(URLComponents(string: running.address))
        let port = try #require(address.port)
        // Without a hold the proxy only counts what goes through it.
        proxy = try HoldingProxy(toPort: port, hold: hold ?? .afterBytes(Int.max))
        address.port = proxy.port
        session = try AgentHarness()
        // The agent never gives up on a held request by itself.
        try session.writeConfig(agentConfig(stallSeconds: 300))
        try session.addAccount(address: try #require(address.string), user: running.user, password: running.password)
        let account = try #require(try QueueStore(path: session.databasePath).account(named: "home"))
        var root = try #require(URLComponents(string: account.webdavURL))
        root.port = port
        directRoot = try #require(root.string)
        dav = WebDAVClient(root: directRoot, credentials: Credentials(username: running.user, password: running.password))
    }
}
