import Testing
@testable import Connectivity

@Suite("Network state")
struct NetworkStateTests {
    let lo = NetworkState.Interface(index: 1, name: "lo", isAdministrativelyUp: true, hasCarrier: true, isLoopback: true)
    let eth0 = NetworkState.Interface(index: 2, name: "eth0", isAdministrativelyUp: true, hasCarrier: true)
    let wlan0 = NetworkState.Interface(index: 3, name: "wlan0", isAdministrativelyUp: true, hasCarrier: true)

    @Test("is offline without a default route, even with every interface up")
    func noDefaultRoute() {
        let state = NetworkState(interfaces: [lo, eth0], defaultRoutes: [])
        #expect(!state.isOnline)
        #expect(state.defaultInterface == nil)
        #expect(state.description == "offline")
    }

    @Test("is online over a default route whose interface is up")
    func online() {
        let state = NetworkState(interfaces: [lo, eth0],
                                 defaultRoutes: [.init(family: .ipv4, interfaceIndex: 2, interfaceName: "eth0", gateway: "192.168.1.1")])
        #expect(state.isOnline)
        #expect(state.defaultInterface?.name == "eth0")
        #expect(state.description == "online via eth0 (192.168.1.1)")
    }

    @Test("is offline when the default route's interface is down or has lost its carrier")
    func downOrNoCarrier() {
        var down = eth0
        down.isAdministrativelyUp = false
        var noCarrier = eth0
        noCarrier.hasCarrier = false
        let route = NetworkState.DefaultRoute(family: .ipv4, interfaceIndex: 2, interfaceName: "eth0")
        #expect(!NetworkState(interfaces: [lo, down], defaultRoutes: [route]).isOnline)
        #expect(!NetworkState(interfaces: [lo, noCarrier], defaultRoutes: [route]).isOnline)
    }

    @Test("a default route into loopback or an unknown interface does not count")
    func loopbackAndUnknown() {
        let state = NetworkState(interfaces: [lo], defaultRoutes: [
            .init(family: .ipv4, interfaceIndex: 1, interfaceName: "lo"),
            .init(family: .ipv6, interfaceIndex: 9, interfaceName: nil),
        ])
        #expect(!state.isOnline)
    }

    @Test("prefers the IPv4 default route's interface to the IPv6 one's, and the lower metric within a family")
    func preference() {
        let both = NetworkState(interfaces: [lo, eth0, wlan0], defaultRoutes: [
            .init(family: .ipv6, interfaceIndex: 2, interfaceName: "eth0", metric: 1),
            .init(family: .ipv4, interfaceIndex: 3, interfaceName: "wlan0", metric: 600),
        ])
        #expect(both.defaultInterface?.name == "wlan0")

        let metrics = NetworkState(interfaces: [lo, eth0, wlan0], defaultRoutes: [
            .init(family: .ipv4, interfaceIndex: 3, interfaceName: "wlan0", metric: 600),
            .init(family: .ipv4, interfaceIndex: 2, interfaceName: "eth0", metric: 100),
        ])
        #expect(metrics.defaultInterface?.name == "eth0")

        let v6only = NetworkState(interfaces: [lo, eth0], defaultRoutes: [
            .init(family: .ipv6, interfaceIndex: 2, interfaceName: "eth0", gateway: "fe80::1"),
        ])
        #expect(v6only.isOnline)
        #expect(v6only.defaultInterface?.name == "eth0")
    }

    @Test("keeps only unicast main-table routes to 0/0 from what the kernel dumps")
    func fromNetlinkRecords() {
        let links = [
            NetlinkSocket.Link(index: 1, name: "lo", isUp: true, hasCarrier: true, isLoopback: true),
            NetlinkSocket.Link(index: 2, name: "eth0", isUp: true, hasCarrier: true, isLoopback: false),
        ]
        func route(_ family: Int32 = 2, length: UInt8 = 0, unicast: Bool = true, main: Bool = true, oif: Int32 = 2) -> NetlinkSocket.Route {
            NetlinkSocket.Route(family: family, destinationLength: length, isUnicast: unicast, isMainTable: main,
                                outputIndex: oif, metric: 0, gateway: nil)
        }
        let ignored = NetworkState(links: links, routes: [
            route(length: 24),        // 192.168.1.0/24
            route(unicast: false),    // blackhole default
            route(main: false),       // a VPN's policy table
            route(oif: 0),            // no output interface
        ])
        #expect(ignored.defaultRoutes.isEmpty)
        #expect(ignored.interfaces.map(\.name) == ["lo", "eth0"])

        let kept = NetworkState(links: links, routes: [route(), route(10)])
        #expect(kept.defaultRoutes.map(\.family) == [.ipv4, .ipv6])
        #expect(kept.defaultRoutes.allSatisfy { $0.interfaceName == "eth0" })
    }
}
