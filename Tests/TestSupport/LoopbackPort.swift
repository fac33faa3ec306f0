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

    /// Waits until something accepts connections on the port, or throws after `timeout` seconds.
    public static func waitUntilListening(_ port: Int, timeout: Double = 15, what: String) throws {
        let deadline = Date.timeIntervalSinceReferenceDate + timeout
        while Date.timeIntervalSinceReferenceDate < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let ok = withUnsafePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if ok { return }
            usleep(50_000)
        }
        throw TestFailure("\(what) did not listen on 127.0.0.1:\(port) within \(Int(timeout)) s")
    }
}
