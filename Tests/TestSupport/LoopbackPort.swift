import Foundation
import Glibc

/// A TCP port on 127.0.0.1 that was free a moment ago, for servers that want one given.
public enum LoopbackPort {
    public static func pick() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard withAddress("127.0.0.1", 0, { bind(fd, $0, $1) == 0 }) == true, let port = boundPort(fd) else {
            throw TestFailure("bind to 127.0.0.1:0: \(String(cString: strerror(errno)))")
        }
        return port
    }

    /// The port the socket `fd` is bound to (0 when it is bound to none); nil when it is no socket.
    public static func boundPort(_ fd: Int32) -> Int? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        return named ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    /// `body` given the IPv4 address `host`:`port` and its length; nil when `host` is not one.
    private static func withAddress<T>(_ host: String, _ port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
        return withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
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
        guard withAddress(host, port, { bind(fd, $0, $1) == 0 }) == true else {
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
        return withAddress("127.0.0.1", port, { connect(fd, $0, $1) == 0 }) == true ? 0 : errno
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
