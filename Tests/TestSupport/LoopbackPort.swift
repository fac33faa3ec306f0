import Foundation
import Glibc

/// A TCP port on 127.0.0.1 that was free a moment ago, for servers that want one given.
public enum LoopbackPort {
    public static func pick() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure("bind to 127.0.0.1:0: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Keeps `port` on `host` (IPv4) taken while its server is down: a socket bound to it and
    /// not listening, so a connection there is refused, as with nothing at all, but the kernel
    /// cannot give the port to a server another test starts meanwhile (whose port 0 could
    /// otherwise come out the same, and answer the agent in its place). Nil when the port
    /// cannot be bound; close the descriptor before starting the server there again.
    public static func hold(_ port: Int, host: String = "127.0.0.1") -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        // Bound beside the server's connections still in TIME_WAIT; a port-0 bind elsewhere
        // still counts this one as taken.
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        let bound = inet_pton(AF_INET, host, &address.sin_addr) == 1 && withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard bound else {
            close(fd)
            return nil
        }
        return fd
    }

    /// The errno of one TCP connection to 127.0.0.1:`port`, closed at once (0: it was accepted).
    public static func connectError(_ port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        return connected ? 0 : errno
    }

    /// Waits until something accepts connections on the port, or throws after `timeout` seconds.
    public static func waitUntilListening(_ port: Int, timeout: Double = 15, what: String) throws {
        let deadline = Date.timeIntervalSinceReferenceDate + timeout
        while Date.timeIntervalSinceReferenceDate < deadline {
            if connectError(port) == 0 { return }
            usleep(50_000)
        }
        throw TestFailure("\(what) did not listen on 127.0.0.1:\(port) within \(Int(timeout)) s")
    }
}
