/// What the kernel says about the way out: interfaces and default routes of the main table.
///
/// A value: the monitor hands out a fresh one after every change, and the gate decides from it.
public struct NetworkState: Sendable, Equatable {
    /// One network interface, as `ip link` shows it.
    public struct Interface: Sendable, Equatable, Hashable {
        public var index: Int32
        public var name: String
        /// IFF_UP: someone set it up (`ip link set X up`).
        public var isAdministrativelyUp: Bool
        /// IFF_RUNNING or IFF_LOWER_UP: the driver sees a carrier (cable in, associated, peer up).
        public var hasCarrier: Bool
        public var isLoopback: Bool

        public init(index: Int32, name: String, isAdministrativelyUp: Bool, hasCarrier: Bool, isLoopback: Bool = false) {
            self.index = index
            self.name = name
            self.isAdministrativelyUp = isAdministrativelyUp
            self.hasCarrier = hasCarrier
            self.isLoopback = isLoopback
        }

        /// Up and with a carrier: packets sent here can leave.
        public var isUp: Bool { isAdministrativelyUp && hasCarrier }
    }

    public enum Family: Sendable, Equatable, Hashable {
        case ipv4, ipv6
    }

    /// A unicast route to 0.0.0.0/0 or ::/0 in the main table.
    public struct DefaultRoute: Sendable, Equatable, Hashable {
        public var family: Family
        public var interfaceIndex: Int32
        /// The output interface's name; nil when the link dump did not list it (a race with its removal).
        public var interfaceName: String?
        /// The next hop, e.g. "192.168.1.1"; nil for an on-link route (`default dev wg0`).
        public var gateway: String?
        /// RTA_PRIORITY: lower wins.
        public var metric: UInt32

        public init(family: Family, interfaceIndex: Int32, interfaceName: String?, gateway: String? = nil, metric: UInt32 = 0) {
            self.family = family
            self.interfaceIndex = interfaceIndex
            self.interfaceName = interfaceName
            self.gateway = gateway
            self.metric = metric
        }
    }

    public var interfaces: [Interface]
    public var defaultRoutes: [DefaultRoute]

    public init(interfaces: [Interface], defaultRoutes: [DefaultRoute]) {
        self.interfaces = interfaces
        self.defaultRoutes = defaultRoutes
    }

    public func interface(index: Int32) -> Interface? { interfaces.first { $0.index == index } }
    public func interface(named name: String) -> Interface? { interfaces.first { $0.name == name } }

    /// Default routes whose interface is up and is not loopback (a default route into `lo`
    /// reaches nothing), best first: IPv4 before IPv6, then by metric.
    public var usableDefaultRoutes: [DefaultRoute] {
        defaultRoutes
            .filter { route in
                guard let interface = interface(index: route.interfaceIndex) else { return false }
                return interface.isUp && !interface.isLoopback
            }
            .sorted { a, b in
                if a.family != b.family { return a.family == .ipv4 }
                return a.metric < b.metric
            }
    }

    /// There is a default route over an interface that is up.
    public var isOnline: Bool { !usableDefaultRoutes.isEmpty }

    /// The interface traffic to the server leaves by: the best usable IPv4 default route's,
    /// else the best IPv6 one's; nil when offline.
    public var defaultInterface: Interface? {
        usableDefaultRoutes.first.flatMap { interface(index: $0.interfaceIndex) }
    }

    /// Online and the default interface: the two facts a change is reported for.
    var summary: Summary { Summary(isOnline: isOnline, defaultInterface: defaultInterface?.name) }

    struct Summary: Equatable {
        var isOnline: Bool
        var defaultInterface: String?
    }
}

extension NetworkState: CustomStringConvertible {
    /// "online via wlan0 (192.168.1.1)" or "offline", for logs.
    public var description: String {
        guard let route = usableDefaultRoutes.first else { return "offline" }
        let name = route.interfaceName ?? "#\(route.interfaceIndex)"
        if let gateway = route.gateway { return "online via \(name) (\(gateway))" }
        return "online via \(name)"
    }
}
