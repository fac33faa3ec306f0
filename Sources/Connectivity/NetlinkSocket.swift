import CSystem
import Glibc
import Platform

/// A NETLINK_ROUTE socket: dumps of links and routes, and the events of the groups it joined.
///
/// The one place that touches netlink memory. Records come out as Swift values. Owned by
/// one thread (it keeps a sequence number and a buffer), so it is not Sendable.
final class NetlinkSocket {
    struct Link: Equatable {
        var index: Int32
        var name: String
        var isUp: Bool
        var hasCarrier: Bool
        var isLoopback: Bool
    }

    struct Route: Equatable {
        var family: Int32
        var destinationLength: UInt8
        var isUnicast: Bool
        var isMainTable: Bool
        var outputIndex: Int32
        var metric: UInt32
        var gateway: String?
    }

    enum Groups {
        /// Links appearing, going up or down, losing carrier; IPv4 and IPv6 routes changing.
        static let connectivity = UInt32(CSYSTEM_NETLINK_GROUP_LINK)
            | UInt32(CSYSTEM_NETLINK_GROUP_IPV4_ROUTE)
            | UInt32(CSYSTEM_NETLINK_GROUP_IPV6_ROUTE)
    }

    let fd: Int32
    private var sequence: UInt32 = 0
    // The kernel fills a dump reply up to about 32 KiB (NLMSG_GOODSIZE grows with the page
    // size); 64 KiB holds any one datagram, and MSG_TRUNC tells us if it did not.
    private var buffer = [UInt8](repeating: 0, count: 65536)

    /// A socket in the calling thread's network namespace, joined to `groups` (0 for none).
    init(groups: UInt32 = 0) throws(SystemError) {
        // Event sockets get a large buffer: a link flap emits a burst of route messages,
        // and an overrun (ENOBUFS) costs a full re-read.
        let receiveBuffer: Int32 = groups == 0 ? 0 : 1 << 20
        fd = try valueOrErrno("netlink socket") { csystem_netlink_open(groups, receiveBuffer) }
        if groups == 0 {
            // The kernel always answers a dump; the timeout is only against a wedged one.
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    deinit { close(fd) }

    func dumpLinks() throws(SystemError) -> [Link] {
        try dump(Int32(CSYSTEM_NETLINK_DUMP_LINKS), family: 0, operation: "netlink dump links").compactMap { message in
            guard message.kind == Int32(CSYSTEM_NETLINK_LINK) else { return nil }
            let link = message.link
            return Link(index: link.index, name: Self.string(link.name), isUp: link.is_up != 0,
                        hasCarrier: link.is_running != 0 || link.is_lower_up != 0, isLoopback: link.is_loopback != 0)
        }
    }

    /// The routes of every table for `family` (AF_INET or AF_INET6).
    func dumpRoutes(family: Int32) throws(SystemError) -> [Route] {
        let operation = family == AF_INET6 ? "netlink dump IPv6 routes" : "netlink dump IPv4 routes"
        return try dump(Int32(CSYSTEM_NETLINK_DUMP_ROUTES), family: UInt8(family), operation: operation).compactMap { message in
            guard message.kind == Int32(CSYSTEM_NETLINK_ROUTE) else { return nil }
            let route = message.route
            let gateway = Self.string(route.gateway)
            return Route(family: Int32(route.family), destinationLength: route.destination_length,
                         isUnicast: route.is_unicast != 0, isMainTable: route.is_main_table != 0,
                         outputIndex: route.output_index, metric: route.metric,
                         gateway: gateway.isEmpty ? nil : gateway)
        }
    }

    /// What `drain()` found queued on an event socket.
    enum Drained: Equatable {
        case nothing
        case events
        /// The kernel dropped events because the socket buffer was full: whatever we knew is stale.
        case overrun
    }

    /// Reads every queued event without blocking. Events are not parsed: any of them means
    /// "read the state again", and a dump is the only answer that cannot miss one.
    func drain() throws(SystemError) -> Drained {
        var result = Drained.nothing
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { if result == .nothing { result = .events }; continue }
            if n == 0 { return result }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return result
            case ENOBUFS: result = .overrun
            default: throw SystemError("netlink recv")
            }
        }
    }

    // MARK: - Dumps

    private func dump(_ what: Int32, family: UInt8, operation: String) throws(SystemError) -> [csystem_netlink_message] {
        // A dump that raced with a change is marked NLM_F_DUMP_INTR; ask again, a few times.
        var messages: [csystem_netlink_message] = []
        for _ in 0..<5 {
            let (result, interrupted) = try dumpOnce(what, family: family, operation: operation)
            messages = result
            if !interrupted { break }
        }
        return messages
    }

    private func dumpOnce(_ what: Int32, family: UInt8, operation: String) throws(SystemError) -> ([csystem_netlink_message], Bool) {
        sequence &+= 1
        let sequence = self.sequence
        try valueOrErrno(operation) { csystem_netlink_request_dump(fd, what, family, sequence) }
        var messages: [csystem_netlink_message] = []
        var interrupted = false
        while true {
            let n = try valueOrErrno(operation) {
                buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_TRUNC)) }
            }
            guard n <= buffer.count else { throw SystemError(operation, errno: EMSGSIZE) }
            var done = false
            let malformed = buffer.withUnsafeBytes { raw in
                var offset = 0
                var message = csystem_netlink_message()
                while true {
                    let found = csystem_netlink_next(raw.baseAddress, n, &offset, &message)
                    if found == 0 { return false }
                    if found < 0 { return true }
                    // Replies to an earlier dump that timed out carry an older sequence number.
                    guard message.sequence == sequence else { continue }
                    if message.dump_interrupted != 0 { interrupted = true }
                    switch message.kind {
                    case Int32(CSYSTEM_NETLINK_DONE), Int32(CSYSTEM_NETLINK_ERROR):
                        done = true
                        messages.append(message)
                        return false
                    default:
                        messages.append(message)
                    }
                }
            }
            if malformed { throw SystemError(operation, errno: EBADMSG) }
            if done { break }
        }
        if let last = messages.last, last.error != 0 { throw SystemError(operation, errno: last.error) }
        return (messages, interrupted)
    }

    /// A NUL-terminated C array imported as a tuple, as a String.
    private static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
