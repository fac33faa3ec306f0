import Testing
@testable import Connectivity

@Suite("Snapshot of this machine")
struct SnapshotTests {
    @Test("finds loopback up, and says online exactly when a default route leaves by an up interface")
    func thisMachine() throws {
        let state = try NetworkState.current()
        let lo = try #require(state.interface(named: "lo"))
        #expect(lo.isLoopback)
        #expect(lo.isAdministrativelyUp)
        #expect(lo.index > 0)
        #expect(Set(state.interfaces.map(\.index)).count == state.interfaces.count)

        for route in state.defaultRoutes {
            #expect(route.interfaceIndex > 0)
            #expect(route.interfaceName == state.interface(index: route.interfaceIndex)?.name)
        }
        let upDefault = state.defaultRoutes.contains { route in
            guard let interface = state.interface(index: route.interfaceIndex) else { return false }
            return interface.isAdministrativelyUp && interface.hasCarrier && !interface.isLoopback
        }
        #expect(state.isOnline == upDefault)
        #expect((state.defaultInterface != nil) == state.isOnline)
        if let chosen = state.defaultInterface {
            #expect(state.defaultRoutes.contains { $0.interfaceIndex == chosen.index })
        }
    }

    @Test("agrees with `ip route show default` about which interfaces carry a default route")
    func agreesWithIproute() throws {
        let state = try NetworkState.current()
        var expected = Set<String>()
        for family in ["-4", "-6"] {
            let output = try IP.run([family, "route", "show", "default", "table", "main"])
            for line in output.split(separator: "\n") {
                let words = line.split(separator: " ").map(String.init)
                guard words.first == "default", let dev = words.firstIndex(of: "dev"), dev + 1 < words.count else { continue }
                expected.insert(words[dev + 1])
            }
        }
        #expect(Set(state.defaultRoutes.compactMap(\.interfaceName)) == expected)
    }
}
