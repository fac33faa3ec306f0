import CSystem
import Dispatch
import Glibc
import Platform
import Synchronization

/// The agent's doorbell: a Unix socket in the runtime folder (0700) that only processes of
/// the same user may ring. It carries no intent of its own: every request is already in
/// the database; the socket only says "look now".
///
/// One thread accepts, waiting in `poll` on the socket and on a wake-up. `close()` wakes it
/// and waits for it to end before the socket is closed: a descriptor closed under a thread
/// blocked in `accept` could be reused by the next file opened, and that thread would then
/// accept on, or close, something that is not its socket.
public final class ControlSocketServer: @unchecked Sendable {
    // Sendable by construction: `fd`, `path`, `wakeUp` and `ended` never change after init;
    // the accept loop runs on one thread; `handler` is a Sendable closure; `phase` is guarded
    // by its mutex.
    let fd: Int32
    public let path: String
    let handler: @Sendable (String) -> String
    private let wakeUp: WakeUp
    /// Signalled once by the accept thread as it leaves.
    private let ended = DispatchSemaphore(value: 0)
    private enum Phase { case ready, accepting, closed }
    private let phase = Locked(Phase.ready)
    /// The accept thread runs (set before it starts, cleared as it leaves).
    private let looping = Atomic(false)

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
            try FileIO.unlink(LocalPath(path), ifPresent: true)
        }
        wakeUp = try WakeUp()
        // Non-blocking: a client that gave up between poll and accept must not hold the loop.
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        fd = try valueOrErrno("socket") { socket(AF_UNIX, flags, 0) }
        do {
            var address = try Self.address(path)
            let size = socklen_t(MemoryLayout<sockaddr_un>.size)
            try valueOrErrno("bind", path: path) {
                withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
            }
            // bind never follows a link, and the folder is ours alone: chmod reaches this socket.
            try valueOrErrno("chmod", path: path) { chmod(path, 0o600) }
            try valueOrErrno("listen", path: path) { listen(fd, 16) }
        } catch {
            try? FileIO.close(fd)
            throw error
        }
    }

    /// Accepts connections on a thread of its own until `close()`.
    public func start() {
        let starting = phase.withLock { p in
            guard p == .ready else { return false }
            p = .accepting
            return true
        }
        guard starting else { return }
        looping.store(true, ordering: .sequentiallyConsistent)
        let running = DedicatedThread.startDetached(name: "control-socket") { [self] in
            acceptLoop()
            looping.store(false, ordering: .sequentiallyConsistent)
            ended.signal()
        }
        if !running {
            // The doorbell is deaf (the agent still looks at the queue every few seconds);
            // `close()` must not wait for a loop that never ran.
            Log.error("control socket: no thread to answer on; commands reach the agent only at its next look at the queue")
            looping.store(false, ordering: .sequentiallyConsistent)
            ended.signal()
        }
    }

    /// Stops accepting, waits for the accept thread to end (a request being answered is
    /// answered first), then closes the socket and removes its name. Once only.
    public func close() {
        let was = phase.withLock { p in
            defer { p = .closed }
            return p
        }
        guard was != .closed else { return }
        if was == .accepting {
            wakeUp.signal()
            ended.wait()
        }
        do { try FileIO.close(fd, path: LocalPath(path)) } catch { Log.warning("control socket: \(error)") }
        do { try FileIO.unlink(LocalPath(path), ifPresent: true) } catch { Log.warning("control socket: \(error)") }
    }

    /// Whether the accept thread has ended, or never started (after `close()`, always).
    var acceptLoopEnded: Bool { !looping.load(ordering: .sequentiallyConsistent) }

    /// `close()` has begun.
    var isClosing: Bool { phase.withLock { $0 == .closed } }

    private func acceptLoop() {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeUp.fd, events: Int16(POLLIN), revents: 0)]
        while true {
            fds[0].revents = 0
            fds[1].revents = 0
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                Log.error("control socket: poll: \(String(cString: strerror(errno))); the doorbell is deaf until the agent restarts")
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            let client = csystem_accept_cloexec(fd)
            if client < 0 {
                // Gone before it was taken (EAGAIN, ECONNABORTED), or out of descriptors for now.
                if [EINTR, EAGAIN, EWOULDBLOCK, ECONNABORTED, EMFILE, ENFILE].contains(errno) { continue }
                Log.error("control socket: accept: \(String(cString: strerror(errno))); the doorbell is deaf until the agent restarts")
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
        let request = String(decoding: buffer[0..<n], as: UTF8.self).trimmingWhitespace()
        let reply = handler(request) + "\n"
        // A client that gave up waiting is gone: no SIGPIPE for its answer.
        _ = reply.withCString { Glibc.send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
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
        // An agent that closed the connection is no agent here, not a SIGPIPE ending the command.
        guard line.withCString({ Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self).trimmingWhitespace()
    }
}
