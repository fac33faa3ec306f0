import Glibc
import Platform

extension NetworkState {
    /// Reads links and default routes from the kernel over rtnetlink, in the calling
    /// thread's network namespace: three dumps (links, IPv4 and IPv6 routes) on a fresh socket.
    public static func current() throws(SystemError) -> NetworkState {
        try read(from: NetlinkSocket())
    }

    /// Reads the state of another network namespace, from a thread that enters it.
    static func current(in namespace: NetworkNamespace) throws(SystemError) -> NetworkState {
        let result = try DedicatedThread.run { () -> Result<NetworkState, SystemError> in
            do throws(SystemError) {
                try namespace.enterOnCurrentThread()
                return .success(try current())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    static func read(from socket: NetlinkSocket) throws(SystemError) -> NetworkState {
        let links = try socket.dumpLinks()
        var routes = try socket.dumpRoutes(family: AF_INET)
        do throws(SystemError) {
            routes += try socket.dumpRoutes(family: AF_INET6)
        } catch where error.errno == EAFNOSUPPORT {
            // Booted with ipv6.disable=1: no IPv6 routes to report.
        }
        return NetworkState(links: links, routes: routes)
    }

    init(links: [NetlinkSocket.Link], routes: [NetlinkSocket.Route]) {
        let interfaces = links.map {
            Interface(index: $0.index, name: $0.name, isAdministrativelyUp: $0.isUp,
                      hasCarrier: $0.hasCarrier, isLoopback: $0.isLoopback)
        }
        let names = Dictionary(interfaces.map { ($0.index, $0.name) }, uniquingKeysWith: { first, _ in first })
        let defaults = routes.compactMap { route -> DefaultRoute? in
            guard route.destinationLength == 0, route.isUnicast, route.isMainTable, route.outputIndex != 0 else { return nil }
            let family: Family
            switch route.family {
            case AF_INET: family = .ipv4
            case AF_INET6: family = .ipv6
            default: return nil
            }
            return DefaultRoute(family: family, interfaceIndex: route.outputIndex, interfaceName: names[route.outputIndex],
                                gateway: route.gateway, metric: route.metric)
        }
        self.init(interfaces: interfaces, defaultRoutes: defaults)
    }
}
