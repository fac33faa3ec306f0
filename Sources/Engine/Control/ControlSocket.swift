import Foundation
import CSystem
import Glibc
import Platform

/// The agent's doorbell: a Unix socket in the runtime folder (0700) that only processes of
/// the same user may ring. It carries no intent of its own: every request is already in
/// the database; the socket only says "look now".
public final class ControlSocketServer: @unchecked Sendable {
    // Sendable by construction: `fd` and `path` never change after init; the accept loop
    // runs on one thread; `handler` is a Sendable closure.
    let fd: Int32
    public let path: String
    let handler: @Sendable (String) -> String

    /// Binds the socket, replacing a stale one left by a dead agent.
    public init(path: String, handler: @escaping @Sendable (String) -> String) throws {
        self.path = path
        self.handler = handler
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        try PrivateFolder.prepare(folder, role: .runtime)
        // Only a stale socket is replaced; a link or a file in its place is not ours to remove.
        var existing = stat()
        if lstat(path, &existing) == 0 {
            guard existing.st_mode & S_IFMT == S_IFSOCK else {
                throw PrivateFolder.Problem(path: path, message: "agent's socket \(path) is taken by something that is not a socket",
                                            action: "remove it (rm \"\(path)\") and start the agent again")
            }
            unlink(path)
        }
        fd = try valueOrErrno("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        var address = try Self.address(path)
        let size = socklen_t(MemoryLayout<sockaddr_un>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
        if bound != 0 { let e = SystemError("bind", path: path); Glibc.close(fd); throw e }
        // bind never follows a link, and the folder is ours alone: chmod reaches this socket.
        chmod(path, 0o600)
        if listen(fd, 16) != 0 { let e = SystemError("listen", path: path); Glibc.close(fd); throw e }
    }

    /// Accepts connections on a thread of its own until `close()`.
    public func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "control-socket"
        thread.start()
    }

    public func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
        unlink(path)
    }

    private func acceptLoop() {
        while true {
            let client = csystem_accept_cloexec(fd)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            serve(client)
        }
    }

    private func serve(_ client: Int32) {
        defer { Glibc.close(client) }
        var peer: uid_t = 0
        guard csystem_peer_uid(client, &peer) == 0, peer == geteuid() else {
            Log.warning("control socket: refused a connection from another user (uid \(peer))")
            return
        }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(client, &buffer, buffer.count)
        guard n > 0 else { return }
        let request = String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let reply = handler(request) + "\n"
        _ = reply.withCString { write(client, $0, strlen($0)) }
    }

    static func address(_ path: String) throws(SystemError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw SystemError("bind", errno: ENAMETOOLONG, path: path) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return address
    }
}

/// Rings the agent's doorbell.
public enum ControlSocketClient {
    /// Sends `request` and returns the reply, or nil when no agent listens.
    public static func send(_ request: String, to path: String, timeoutSeconds: Int = 2) -> String? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard var address = try? ControlSocketServer.address(path) else { return nil }
        // connect() would follow a link: only a socket itself is rung.
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFSOCK else { return nil }
        let size = socklen_t(MemoryLayout<sockaddr_un>.size)
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) } }
        guard connected == 0 else { return nil }
        // Whoever listens must be this user too, or it could answer for an agent it is not.
        var peer: uid_t = 0
        guard csystem_peer_uid(fd, &peer) == 0, peer == geteuid() else { return nil }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let line = request + "\n"
        guard line.withCString({ write(fd, $0, strlen($0)) }) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
