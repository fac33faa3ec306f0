import Foundation
import Testing
@testable import Connectivity

/// A sysfs tree laid out the way the kernel lays out /sys/class/net, in a temporary folder.
final class FakeSysfs {
    let root: String

    init() throws {
        root = FileManager.default.temporaryDirectory.path + "/iu-sysfs-" + String(UInt64.random(in: .min ... .max), radix: 16)
        try FileManager.default.createDirectory(atPath: root + "/class/net", withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func interface(_ name: String, uevent: String) throws -> String {
        let folder = root + "/class/net/" + name
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try uevent.write(toFile: folder + "/uevent", atomically: false, encoding: .utf8)
        return folder
    }
}

@Suite("Interface classifier")
struct InterfaceClassifierTests {
    @Test("tells Wi-Fi by wireless/, by a phy80211 link, or by DEVTYPE=wlan, and wired Ethernet from all three")
    func fakeTree() throws {
        let sysfs = try FakeSysfs()
        let wlan0 = try sysfs.interface("wlan0", uevent: "INTERFACE=wlan0\nIFINDEX=3\n")
        try FileManager.default.createDirectory(atPath: wlan0 + "/wireless", withIntermediateDirectories: false)
        let wlp2s0 = try sysfs.interface("wlp2s0", uevent: "INTERFACE=wlp2s0\nIFINDEX=4\n")
        // The real link points into /sys/devices; here it dangles, and must still count.
        try FileManager.default.createSymbolicLink(atPath: wlp2s0 + "/phy80211", withDestinationPath: "../../../devices/pci0000:00/0000:00:1c.0/0000:02:00.0/ieee80211/phy0")
        _ = try sysfs.interface("wlx00c0ca", uevent: "DEVTYPE=wlan\nINTERFACE=wlx00c0ca\nIFINDEX=5\n")
        _ = try sysfs.interface("eth0", uevent: "INTERFACE=eth0\nIFINDEX=2\n")
        _ = try sysfs.interface("usb0", uevent: "DEVTYPE=gadget\nINTERFACE=usb0\nIFINDEX=6\n")

        let classifier = InterfaceClassifier(sysfsRoot: sysfs.root)
        #expect(classifier.isWireless("wlan0"))
        #expect(classifier.isWireless("wlp2s0"))
        #expect(classifier.isWireless("wlx00c0ca"))
        #expect(!classifier.isWireless("eth0"))
        #expect(!classifier.isWireless("usb0"))
        #expect(!classifier.isWireless("wwan0"), "an interface that is not there is not wireless")
    }

    @Test("refuses names that would walk out of sysfs")
    func hostileNames() throws {
        let sysfs = try FakeSysfs()
        let outside = sysfs.root + "/class/wireless"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let classifier = InterfaceClassifier(sysfsRoot: sysfs.root)
        #expect(!classifier.isWireless(".."))
        #expect(!classifier.isWireless("../x"))
        #expect(!classifier.isWireless(""))
    }

    @Test("says loopback on this machine is not wireless")
    func realSysfs() {
        #expect(!InterfaceClassifier().isWireless("lo"))
    }
}
