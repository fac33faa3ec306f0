import Foundation
import Glibc
import Platform

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

    /// Waits until `process` itself listens on the port. False when it exited first (the port
    /// was taken meanwhile, by a server another test started); throws after `timeout`
    /// seconds. A connection alone would prove nothing: another program may hold the port,
    /// and a connection to a port nobody listens on can meet itself (TCP's simultaneous
    /// open), since the kernel may pick that very port as the connection's own.
    public static func waitUntilListening(_ port: Int, by process: ChildProcess, timeout: Double = 15, what: String) throws -> Bool {
        let deadline = Date.timeIntervalSinceReferenceDate + timeout
        while Date.timeIntervalSinceReferenceDate < deadline {
            if let inode = listeningSocket(port), ownsSocket(process.processIdentifier, inode: inode) { return true }
            guard process.isRunning else { return false }
            usleep(20_000)
        }
        throw TestFailure("\(what) did not listen on 127.0.0.1:\(port) within \(Int(timeout)) s")
    }

    /// The inode of the socket listening on 127.0.0.1:`port` (or any address), from /proc/net/tcp.
    static func listeningSocket(_ port: Int) -> String? {
        // Read to the end: the kernel gives a page at a time, and a test run's sockets
        // waiting out their close fill many.
        let fd = open("/proc/net/tcp", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var page = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = page.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += page[..<n]
        }
        let table = String(decoding: bytes, as: UTF8.self)
        let wanted = [String(format: "0100007F:%04X", port), String(format: "00000000:%04X", port)]
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            if fields.count > 9, wanted.contains(String(fields[1])), fields[3] == "0A" { return String(fields[9]) }
        }
        return nil
    }

    static func ownsSocket(_ pid: pid_t, inode: String) -> Bool {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) == "socket:[\(inode)]" }
    }
}
