import Glibc
import Platform

/// Tells wireless interfaces from the rest by what the kernel shows in sysfs.
public struct InterfaceClassifier: Sendable, Equatable {
    /// Where sysfs is mounted; tests point this at a prepared folder.
    public var sysfsRoot: String

    public init(sysfsRoot: String = "/sys") {
        self.sysfsRoot = sysfsRoot
    }

    /// Whether `interface` is a Wi-Fi device: it has `wireless/` (the wext view), a
    /// `phy80211` link (cfg80211 drivers, the usual case), or its uevent says DEVTYPE=wlan.
    /// An interface that is not there, or a name that is not a plain name, is not wireless.
    public func isWireless(_ interface: String) -> Bool {
        guard Self.isPlainName(interface) else { return false }
        let folder = sysfsRoot + "/class/net/" + interface
        // lstat, not stat: `phy80211` is a symlink into the ieee80211 class, and what it
        // points at does not matter, only that the kernel made it.
        if Self.entryExists(folder + "/wireless") || Self.entryExists(folder + "/phy80211") { return true }
        guard let uevent = try? FileIO.readSmallFile(folder + "/uevent", limit: 64 * 1024) else { return false }
        return uevent.split(whereSeparator: \.isNewline).contains { $0.trimmingWhitespace() == "DEVTYPE=wlan" }
    }

    private static func entryExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Interface names are at most 15 bytes and never contain '/'; refuse anything that
    /// could walk out of sysfs.
    private static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && name.utf8.count < 16
    }
}
