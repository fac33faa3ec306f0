import Foundation

/// Two network namespaces joined by a veth pair: the agent's (`agent`, 10.79.N.1) and the
/// server's (`server`, 10.79.N.2), the agent's default route pointing at the server.
/// Needs root (CI runs as root); fails with iproute2's own words otherwise. Removed on deinit.
public final class TestNetwork: @unchecked Sendable {
    // Sendable by construction: all fields are set in init and never change.
    public let agent: String
    public let server: String
    public let agentAddress: String
    public let serverAddress: String
    let agentLink: String
    let serverLink: String

    public init() throws {
        let tag = String(UInt32.random(in: 0..<UInt32.max), radix: 16)
        let subnet = Int.random(in: 1...250)
        agent = "iu-a-\(tag)"
        server = "iu-s-\(tag)"
        agentLink = "iua\(tag.prefix(8))"
        serverLink = "ius\(tag.prefix(8))"
        agentAddress = "10.79.\(subnet).1"
        serverAddress = "10.79.\(subnet).2"
        try ip(["netns", "add", agent])
        try ip(["netns", "add", server])
        try ip(["link", "add", agentLink, "netns", agent, "type", "veth", "peer", "name", serverLink, "netns", server])
        try ip(["-n", agent, "addr", "add", agentAddress + "/24", "dev", agentLink])
        try ip(["-n", server, "addr", "add", serverAddress + "/24", "dev", serverLink])
        for (ns, link) in [(agent, agentLink), (server, serverLink)] {
            try ip(["-n", ns, "link", "set", "lo", "up"])
            try ip(["-n", ns, "link", "set", link, "up"])
        }
        try ip(["-n", agent, "route", "add", "default", "via", serverAddress])
    }

    deinit {
        _ = try? ip(["netns", "delete", agent])
        _ = try? ip(["netns", "delete", server])
    }

    /// Takes the agent's link down: its default route goes with it.
    public func linkDown() throws { try ip(["-n", agent, "link", "set", agentLink, "down"]) }

    /// Brings the link back with its default route.
    public func linkUp() throws {
        try ip(["-n", agent, "link", "set", agentLink, "up"])
        // The route comes back once the link has its carrier again.
        for _ in 0..<50 {
            if (try? ip(["-n", agent, "route", "replace", "default", "via", serverAddress])) != nil { return }
            usleep(100_000)
        }
        try ip(["-n", agent, "route", "replace", "default", "via", serverAddress])
    }

    /// Limits what the server sends and receives to `rate` (tbf), e.g. "40mbit".
    public func throttle(_ rate: String) throws {
        for (ns, link) in [(server, serverLink), (agent, agentLink)] {
            try Shell.run("/usr/sbin/tc", ["-n", ns, "qdisc", "replace", "dev", link, "root", "tbf", "rate", rate,
                                           "burst", "64kb", "latency", "200ms"])
        }
    }

    @discardableResult
    func ip(_ arguments: [String]) throws -> String {
        let r = try Shell.capture("/usr/sbin/ip", arguments)
        guard r.status == 0 else {
            throw TestFailure("`ip \(arguments.joined(separator: " "))` failed (\(r.status)): \(r.stderr) — these tests need root and iproute2")
        }
        return r.stdout
    }
}
