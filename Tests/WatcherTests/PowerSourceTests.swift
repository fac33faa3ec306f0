import Foundation
import Testing
import TestSupport
@testable import Watcher

@Suite("On mains or on battery")
struct PowerSourceTests {
    typealias Supply = PowerSource.Supply

    @Test("the decision from the kernel's power supplies", arguments: [
        ([Supply(name: "AC", type: "Mains", online: true), Supply(name: "BAT0", type: "Battery", status: "Charging")], PowerSource.State.ac),
        ([Supply(name: "AC", type: "Mains", online: false), Supply(name: "BAT0", type: "Battery", status: "Discharging", capacity: 54)], .battery),
        ([Supply(name: "AC", type: "Mains", online: false), Supply(name: "BAT0", type: "Battery", status: "Not charging")], .battery),
        ([Supply(name: "BAT0", type: "Battery", status: "Discharging")], .battery),
        ([Supply(name: "BAT0", type: "Battery", status: "Full")], .unknown),
        ([Supply(name: "ucsi-source-psy-1", type: "USB", online: true), Supply(name: "BAT1", type: "Battery", status: "Charging")], .ac),
        ([Supply(name: "hidpp_battery_0", type: "Battery", status: "Discharging", scope: "Device")], .unknown),
        ([], .unknown),
    ])
    func decide(supplies: [Supply], state: PowerSource.State) {
        #expect(PowerSource.decide(supplies).state == state)
    }

    @Test("read from sysfs; only a battery holds on_ac_power rules")
    func sysfs() throws {
        let sys = try TemporaryFolder.sysfsOnBattery()
        let onBattery = PowerSource.current(sysfsRoot: sys.path)
        #expect(onBattery.state == .battery)
        #expect(onBattery.holdsACPowerRules)
        #expect(onBattery.description == "on battery (BAT0 discharging 54 %)")
        try sys.file("class/power_supply/AC/online", bytes: Array("1\n".utf8))
        #expect(PowerSource.current(sysfsRoot: sys.path).state == .ac)
        #expect(!PowerSource.current(sysfsRoot: sys.path + "/nothing").holdsACPowerRules)
    }
}

extension TemporaryFolder {
    /// A machine's sysfs as it reads on battery: mains unplugged, BAT0 discharging at 54 %.
    static func sysfsOnBattery() throws -> TemporaryFolder {
        let sys = TemporaryFolder("iu-sysfs")
        try sys.file("class/power_supply/AC/type", bytes: Array("Mains\n".utf8))
        try sys.file("class/power_supply/AC/online", bytes: Array("0\n".utf8))
        try sys.file("class/power_supply/BAT0/type", bytes: Array("Battery\n".utf8))
        try sys.file("class/power_supply/BAT0/status", bytes: Array("Discharging\n".utf8))
        try sys.file("class/power_supply/BAT0/capacity", bytes: Array("54\n".utf8))
        return sys
    }
}
