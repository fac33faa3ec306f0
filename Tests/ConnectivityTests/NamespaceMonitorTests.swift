import Testing
import Glibc
import Platform
@testable import Connectivity

/// Real kernels, real links: each test builds its own pair of network namespaces and
/// changes links and routes with `ip`, while the monitor watches from inside one of them.
@Suite("Connectivity monitor inside a network namespace")
struct NamespaceMonitorTests {
    @Test("reports online when a default route appears, offline within 2 s of the link going down, online when it returns")
    func linkDownAndUp() throws {
        let lab = try NamespaceLab()
        defer { lab.remove() }
        let reports = Reports()
        let monitor = ConnectivityMonitor(namespace: lab.namespace, onChange: reports.record)
        try monitor.start()
        defer { monitor.stop() }

        let (first, _) = try reports.waitFor(0, within: .seconds(10))
        #expect(!first.isOnline)
        #expect(first.interface(named: lab.inner)?.isUp == true)
        #expect(Set(first.interfaces.map(\.name)) == ["lo", lab.inner], "the monitor sees the namespace, not the host")
        #expect(monitor.state == first)

        try lab.inside("route", "add", "default", "via", "10.77.0.2")
        let (online, _) = try reports.waitFor(1, within: .seconds(10))
        #expect(online.isOnline)
        #expect(online.defaultInterface?.name == lab.inner)
        #expect(online.defaultRoutes.first?.gateway == "10.77.0.2")

        try lab.inside("link", "set", lab.inner, "down")
        let (offline, tookOffline) = try reports.waitFor(2, within: .seconds(10))
        #expect(!offline.isOnline)
        #expect(offline.defaultInterface == nil)
        #expect(tookOffline < .seconds(3), "offline took \(tookOffline)")

        try lab.inside("link", "set", lab.inner, "up")
        try lab.inside("route", "add", "default", "via", "10.77.0.2")
        let (again, _) = try reports.waitFor(3, within: .seconds(10))
        #expect(again.isOnline)
        #expect(again.defaultInterface?.name == lab.inner)

        // Only changes are reported: link up without a route, or the route re-added, said nothing extra.
        usleep(300_000)
        #expect(reports.all.map(\.isOnline) == [false, true, false, true])
    }

    @Test("goes offline when the peer drops the carrier, though the default route stays in the table")
    func carrierLoss() throws {
        let lab = try NamespaceLab()
        defer { lab.remove() }
        try lab.inside("route", "add", "default", "via", "10.77.0.2")
        let reports = Reports()
        let monitor = ConnectivityMonitor(namespace: lab.namespace, onChange: reports.record)
        try monitor.start()
        defer { monitor.stop() }
        #expect(try reports.waitFor(0, within: .seconds(10)).0.isOnline)

        try lab.atPeer("link", "set", lab.outer, "down")
        let (offline, _) = try reports.waitFor(1, within: .seconds(10))
        #expect(!offline.isOnline)
        #expect(offline.defaultRoutes.contains { $0.interfaceName == lab.inner }, "IPv4 keeps routes on carrier loss")
        #expect(offline.interface(named: lab.inner)?.isAdministrativelyUp == true)
        #expect(offline.interface(named: lab.inner)?.hasCarrier == false)

        try lab.atPeer("link", "set", lab.outer, "up")
        #expect(try reports.waitFor(2, within: .seconds(10)).0.isOnline)
    }

    @Test("reports a change of default interface, and nothing once stopped")
    func interfaceChangeAndStop() throws {
        let lab = try NamespaceLab()
        defer { lab.remove() }
        try lab.addSecondLink()
        try lab.inside("route", "add", "default", "dev", lab.second, "metric", "500")
        let reports = Reports()
        let monitor = ConnectivityMonitor(namespace: lab.namespace, onChange: reports.record)
        try monitor.start()
        #expect(try reports.waitFor(0, within: .seconds(10)).0.defaultInterface?.name == lab.second)

        try lab.inside("route", "add", "default", "via", "10.77.0.2", "metric", "100")
        let (moved, _) = try reports.waitFor(1, within: .seconds(10))
        #expect(moved.isOnline)
        #expect(moved.defaultInterface?.name == lab.inner)

        monitor.stop()
        try lab.inside("link", "set", lab.inner, "down")
        try lab.inside("link", "set", lab.second, "down")
        usleep(400_000)
        #expect(reports.all.count == 2)
    }

    @Test("reads the namespace's IPv6 default route, and still prefers IPv4 when both exist")
    func ipv6() throws {
        let lab = try NamespaceLab()
        defer { lab.remove() }
        try lab.inside("-6", "address", "add", "fd00:77::1/64", "dev", lab.inner, "nodad")
        try lab.inside("-6", "route", "add", "default", "via", "fd00:77::2", "dev", lab.inner)

        let v6only = try NetworkState.current(in: lab.namespace)
        #expect(v6only.isOnline)
        #expect(v6only.defaultRoutes.map(\.family) == [.ipv6])
        #expect(v6only.defaultRoutes.first?.gateway == "fd00:77::2")
        #expect(v6only.defaultInterface?.name == lab.inner)

        try lab.addSecondLink()
        try lab.inside("route", "add", "default", "via", "10.78.0.2")
        let both = try NetworkState.current(in: lab.namespace)
        #expect(Set(both.defaultRoutes.map(\.family)) == [.ipv4, .ipv6])
        #expect(both.defaultInterface?.name == lab.second)
    }

    @Test("start fails with the system's error when the namespace does not exist")
    func missingNamespace() {
        let monitor = ConnectivityMonitor(namespace: NetworkNamespace(named: "iu-conn-does-not-exist"), onChange: { _ in })
        #expect(throws: SystemError("open", errno: ENOENT, path: "/var/run/netns/iu-conn-does-not-exist")) {
            try monitor.start()
        }
        #expect(monitor.state == nil)
    }
}
