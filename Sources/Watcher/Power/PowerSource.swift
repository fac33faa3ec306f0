import FoundationEssentials
import Platform

/// Whether the machine runs on mains power or on its battery, from the kernel's
/// `/sys/class/power_supply` (what UPower reads too).
public struct PowerSource: Sendable, Equatable, CustomStringConvertible {
    public enum State: String, Sendable, Equatable {
        case ac
        case battery
        /// No supply says either way (a desktop or a virtual machine): treated as mains.
        case unknown
    }

    /// One entry of /sys/class/power_supply, as far as the decision needs it.
    public struct Supply: Sendable, Equatable {
        public var name: String
        /// `Mains`, `USB`, `Battery`, `UPS`, `Wireless`...
        public var type: String
        /// `online` (1 or 0) for adapters.
        public var online: Bool?
        /// `status` for batteries: `Charging`, `Discharging`, `Full`, `Not charging`.
        public var status: String?
        /// `Device` for the batteries of a mouse or a headset, which power nothing else.
        public var scope: String?
        public var capacity: Int?

        public init(name: String, type: String, online: Bool? = nil, status: String? = nil, scope: String? = nil, capacity: Int? = nil) {
            self.name = name; self.type = type; self.online = online; self.status = status; self.scope = scope; self.capacity = capacity
        }
    }

    public var state: State
    /// The supply that decided, for the status line ("BAT0 discharging, 54 %").
    public var detail: String?

    public init(state: State, detail: String? = nil) {
        self.state = state
        self.detail = detail
    }

    /// Whether a rule with `on_ac_power` must hold its uploads now.
    public var holdsACPowerRules: Bool { state == .battery }

    public var description: String {
        switch state {
        case .ac: "on mains power"
        case .battery: "on battery" + (detail.map { " (\($0))" } ?? "")
        case .unknown: "power source unknown (treated as mains)"
        }
    }

    /// Reads `<sysfsRoot>/class/power_supply`; tests point it at a prepared folder.
    public static func current(sysfsRoot: String = "/sys") -> PowerSource {
        let folder = sysfsRoot + "/class/power_supply"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        let supplies = names.compactMap { name -> Supply? in
            func read(_ attribute: String) -> String? {
                (try? FileIO.readSmallFile(folder + "/" + name + "/" + attribute, limit: 256))?.trimmingWhitespace()
            }
            guard let type = read("type") else { return nil }
            return Supply(name: name, type: type, online: read("online").map { $0 == "1" }, status: read("status"),
                          scope: read("scope"), capacity: read("capacity").flatMap { Int($0) })
        }
        return decide(supplies)
    }

    /// Mains when any adapter is online; battery when a system battery discharges, or
    /// when there are adapters and none is online; unknown when nothing says.
    public static func decide(_ supplies: [Supply]) -> PowerSource {
        let system = supplies.filter { $0.scope?.lowercased() != "device" }
        let batteries = system.filter { $0.type == "Battery" }
        let adapters = system.filter { $0.type != "Battery" && $0.online != nil }
        if let online = adapters.first(where: { $0.online == true }) { return PowerSource(state: .ac, detail: online.name) }
        func describe(_ b: Supply) -> String {
            [b.name, b.status?.lowercased(), b.capacity.map { "\($0) %" }].compactMap { $0 }.joined(separator: " ")
        }
        if let discharging = batteries.first(where: { $0.status == "Discharging" }) {
            return PowerSource(state: .battery, detail: describe(discharging))
        }
        if !adapters.isEmpty, let battery = batteries.first { return PowerSource(state: .battery, detail: describe(battery)) }
        return PowerSource(state: .unknown)
    }
}
