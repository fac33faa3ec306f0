import Testing
@testable import Connectivity

@Suite("Network gate")
struct NetworkGateTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var online: Bool
        var wireless: Bool
        var metered: MeteredAnswer
        var anyNetwork: NetworkGate.Decision
        var wifiOnly: NetworkGate.Decision
        var testDescription: String { "online=\(online) wireless=\(wireless) metered=\(metered)" }
    }

    @Test("decides go / wait for network / wait for Wi-Fi from online, wireless and metered",
          arguments: [
              Row(online: false, wireless: false, metered: .unknown, anyNetwork: .waitForNetwork, wifiOnly: .waitForNetwork),
              Row(online: false, wireless: true, metered: .notMetered, anyNetwork: .waitForNetwork, wifiOnly: .waitForNetwork),
              Row(online: true, wireless: false, metered: .unknown, anyNetwork: .go, wifiOnly: .waitForWiFi),
              Row(online: true, wireless: false, metered: .notMetered, anyNetwork: .go, wifiOnly: .waitForWiFi),
              Row(online: true, wireless: true, metered: .notMetered, anyNetwork: .go, wifiOnly: .go),
              Row(online: true, wireless: true, metered: .unknown, anyNetwork: .go, wifiOnly: .go),
              Row(online: true, wireless: true, metered: .metered, anyNetwork: .go, wifiOnly: .waitForWiFi),
          ])
    func table(row: Row) {
        let gate = NetworkGate(isOnline: row.online, defaultInterface: row.online ? "if0" : nil,
                               defaultInterfaceIsWireless: row.wireless, metered: row.metered)
        #expect(gate.decision(for: .anyNetwork) == row.anyNetwork)
        #expect(gate.decision(for: .unmeteredWiFi) == row.wifiOnly)
    }

    let lo = NetworkState.Interface(index: 1, name: "lo", isAdministrativelyUp: true, hasCarrier: true, isLoopback: true)
    let eth0 = NetworkState.Interface(index: 2, name: "eth0", isAdministrativelyUp: true, hasCarrier: true)
    let wlan0 = NetworkState.Interface(index: 3, name: "wlan0", isAdministrativelyUp: true, hasCarrier: true)

    func sysfs() throws -> FakeSysfs {
        let sysfs = try FakeSysfs()
        _ = try sysfs.interface("eth0", uevent: "INTERFACE=eth0\n")
        _ = try sysfs.interface("wlan0", uevent: "DEVTYPE=wlan\nINTERFACE=wlan0\n")
        return sysfs
    }

    @Test("holds a Wi-Fi-only rule on a metered hotspot and lets it go on home Wi-Fi")
    func wifiFromState() throws {
        let sysfs = try sysfs()
        let classifier = InterfaceClassifier(sysfsRoot: sysfs.root)
        let state = NetworkState(interfaces: [lo, eth0, wlan0], defaultRoutes: [.init(family: .ipv4, interfaceIndex: 3, interfaceName: "wlan0")])

        let hotspot = FakeRunner(CommandOutput(status: 0, output: "GENERAL.METERED:yes (guessed)\n"))
        let onHotspot = NetworkGate(state: state, classifier: classifier, meteredCheck: MeteredCheck(nmcli: "/usr/bin/nmcli", runner: hotspot.runner))
        #expect(onHotspot.defaultInterface == "wlan0")
        #expect(onHotspot.decision(for: .unmeteredWiFi) == .waitForWiFi)
        #expect(onHotspot.decision(for: .anyNetwork) == .go)
        #expect(hotspot.recorded.first?.arguments.last == "wlan0")

        let home = FakeRunner(CommandOutput(status: 0, output: "GENERAL.METERED:no\n"))
        let atHome = NetworkGate(state: state, classifier: classifier, meteredCheck: MeteredCheck(nmcli: "/usr/bin/nmcli", runner: home.runner))
        #expect(atHome.decision(for: .unmeteredWiFi) == .go)
    }

    @Test("holds a Wi-Fi-only rule on a wired default route without asking NetworkManager")
    func wiredFromState() throws {
        let sysfs = try sysfs()
        let state = NetworkState(interfaces: [lo, eth0, wlan0], defaultRoutes: [
            .init(family: .ipv4, interfaceIndex: 2, interfaceName: "eth0", metric: 100),
            .init(family: .ipv4, interfaceIndex: 3, interfaceName: "wlan0", metric: 600),
        ])
        let nmcli = FakeRunner(CommandOutput(status: 0, output: "GENERAL.METERED:no\n"))
        let gate = NetworkGate(state: state, classifier: InterfaceClassifier(sysfsRoot: sysfs.root),
                               meteredCheck: MeteredCheck(nmcli: "/usr/bin/nmcli", runner: nmcli.runner))
        #expect(gate.defaultInterface == "eth0")
        #expect(gate.decision(for: .unmeteredWiFi) == .waitForWiFi)
        #expect(gate.decision(for: .anyNetwork) == .go)
        #expect(nmcli.recorded.isEmpty)
    }

    @Test("holds everything while offline")
    func offlineFromState() throws {
        let sysfs = try sysfs()
        let state = NetworkState(interfaces: [lo, eth0, wlan0], defaultRoutes: [])
        let gate = NetworkGate(state: state, classifier: InterfaceClassifier(sysfsRoot: sysfs.root),
                               meteredCheck: MeteredCheck(nmcli: nil))
        #expect(gate.decision(for: .anyNetwork) == .waitForNetwork)
        #expect(gate.decision(for: .unmeteredWiFi) == .waitForNetwork)
    }
}
