import Foundation
import Synchronization
import TestSupport
import Testing
@testable import Connectivity

struct CommandFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs iproute2's `ip`, failing with its own words when it fails.
enum IP {
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let result: Shell.Result
        do {
            result = try Shell.capture("/usr/sbin/ip", arguments)
        } catch {
            throw CommandFailure(description: "cannot run /usr/sbin/ip \(arguments.joined(separator: " ")): \(error)")
        }
        guard result.status == 0 else {
            throw CommandFailure(description: "ip \(arguments.joined(separator: " ")) exited \(result.status): " + result.stderr)
        }
        return result.stdout
    }
}

/// Two fresh network namespaces joined by a veth pair:
///
///     iu-conn-XXXX  [inner: 10.77.0.1/24]  ====  [outer: 10.77.0.2/24]  iu-conn-XXXX-peer
///
/// The host's own namespace is never touched. `remove()` deletes both namespaces, which
/// also destroys the veth pair.
struct NamespaceLab {
    let name: String
    let peer: String
    let inner = "iu-inner"
    let outer = "iu-outer"

    var namespace: NetworkNamespace { NetworkNamespace(named: name) }

    init() throws {
        let tag = String(UInt32.random(in: .min ... .max), radix: 16)
        name = "iu-conn-\(tag)"
        peer = "iu-conn-\(tag)-peer"
        do {
            try IP.run(["netns", "add", name])
            try IP.run(["netns", "add", peer])
            try IP.run(["-n", name, "link", "add", inner, "type", "veth", "peer", "name", outer, "netns", peer])
            try IP.run(["-n", name, "link", "set", "lo", "up"])
            try IP.run(["-n", peer, "link", "set", "lo", "up"])
            try IP.run(["-n", name, "address", "add", "10.77.0.1/24", "dev", inner])
            try IP.run(["-n", peer, "address", "add", "10.77.0.2/24", "dev", outer])
            try IP.run(["-n", peer, "link", "set", outer, "up"])
            try IP.run(["-n", name, "link", "set", inner, "up"])
        } catch {
            remove()
            throw CommandFailure(description: "cannot build the network namespaces (tests need root and iproute2): \(error)")
        }
    }

    /// A second veth pair, `second` inside (10.78.0.1/24) to the peer (10.78.0.2/24), both up:
    /// another way out for tests that change the default interface.
    let second = "iu-second"
    func addSecondLink() throws {
        try inside("link", "add", second, "type", "veth", "peer", "name", "iu-second-peer", "netns", peer)
        try inside("address", "add", "10.78.0.1/24", "dev", second)
        try atPeer("address", "add", "10.78.0.2/24", "dev", "iu-second-peer")
        try atPeer("link", "set", "iu-second-peer", "up")
        try inside("link", "set", second, "up")
    }

    /// `ip -n <inner namespace> ...`
    func inside(_ arguments: String...) throws { try IP.run(["-n", name] + arguments) }
    /// `ip -n <peer namespace> ...`
    func atPeer(_ arguments: String...) throws { try IP.run(["-n", peer] + arguments) }

    func remove() {
        _ = try? IP.run(["netns", "delete", name])
        _ = try? IP.run(["netns", "delete", peer])
    }
}

/// Collects what a monitor reports, for tests to wait on.
final class Reports: Sendable {
    private let states = Mutex<[NetworkState]>([])

    func record(_ state: NetworkState) { states.withLock { $0.append(state) } }

    var all: [NetworkState] { states.withLock { $0 } }

    /// Waits until report number `index` (0-based) arrives, and returns it with how long it took.
    /// Blocks (off the async pool's schedule, which other tests can keep busy) until report
    /// `index` arrives.
    func waitFor(_ index: Int, within limit: Duration) throws -> (NetworkState, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        while clock.now - start < limit {
            if let state = states.withLock({ $0.count > index ? $0[index] : nil }) { return (state, clock.now - start) }
            usleep(10_000)
        }
        throw CommandFailure(description: "no report #\(index) within \(limit); reports so far: \(all.map(\.description))")
    }
}
