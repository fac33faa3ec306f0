import Glibc
import Platform
import Synchronization

/// A bus connection that any thread may call through, with a thread of its own that
/// waits on the socket and hands incoming signals to a callback.
///
/// In one sentence: the connection sits behind a mutex; callers make blocking calls under
/// it, and the dispatch thread sleeps in `poll` (without the lock) on the bus socket and a
/// wake-up pipe, pumps the connection under the lock, and runs the signal callback after
/// releasing it, so a callback may call back into the bus.
final class SessionBus: Sendable {
    private let connection: Locked<BusConnection>
    private let socket: Int32
    /// Written to after every call: a call may read signals off the socket into libdbus's
    /// queue, where `poll` cannot see them.
    private let wakeRead: Int32, wakeWrite: Int32
    private let stopping = Atomic<Bool>(false)

    /// The environment's session bus address: `DBUS_SESSION_BUS_ADDRESS`, else the
    /// systemd user bus at `$XDG_RUNTIME_DIR/bus` when that socket exists. Never autolaunch:
    /// starting a bus here would show notifications nobody sees.
    static func address(in environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            var st = stat()
            if stat(runtime + "/bus", &st) == 0, st.st_mode & S_IFMT == S_IFSOCK { return "unix:path=" + runtime + "/bus" }
        }
        return nil
    }

    /// Takes over a connection that `prepare` has set up on the calling thread.
    init(_ connection: sending BusConnection) throws(BusError) {
        guard let fd = connection.fileDescriptor else {
            throw BusError("session bus", message: "the connection has no socket to wait on")
        }
        var fds: [Int32] = [-1, -1]
        // pipe2 hides behind _GNU_SOURCE in Glibc's module; set the flags one by one.
        guard pipe(&fds) == 0 else {
            throw BusError("session bus", message: "pipe: \(String(cString: strerror(errno)))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        socket = fd
        (wakeRead, wakeWrite) = (fds[0], fds[1])
        self.connection = Locked(connection)
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    var isConnected: Bool { connection.withLock { $0.isConnected } }

    /// Calls a method and waits for the reply (at most `timeoutMilliseconds`).
    func call(destination: String, path: String, interface: String, member: String,
              arguments: [BusValue] = [], timeoutMilliseconds: Int32) throws(BusError) -> BusReply {
        defer { wake() }
        return try connection.withLock { (c: inout BusConnection) throws(BusError) -> BusReply in
            guard c.isConnected else { throw BusError("\(interface).\(member)", message: "the session bus went away") }
            return try c.call(destination: destination, path: path, interface: interface, member: member,
                              arguments: arguments, timeoutMilliseconds: timeoutMilliseconds)
        }
    }

    /// Starts the dispatch thread. `onSignals` runs on it, with no lock held.
    func start(name: String, onSignals: @escaping @Sendable ([BusSignal]) -> Void) {
        connection.withLock { $0.collectSignals() }
        // Without a thread (logged) no signal is delivered; calls still work.
        _ = DedicatedThread.startDetached(name: name) { [self] in dispatchLoop(onSignals) }
    }

    /// Ends the dispatch thread; the connection closes when the last reference goes.
    func stop() {
        stopping.store(true, ordering: .releasing)
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        // EAGAIN means the pipe is already full of wake-ups: nothing is lost.
        _ = write(wakeWrite, &byte, 1)
    }

    private func dispatchLoop(_ onSignals: @Sendable ([BusSignal]) -> Void) {
        var fds = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        var drain = [UInt8](repeating: 0, count: 64)
        while !stopping.load(ordering: .acquiring) {
            let (alive, signals) = connection.withLock { c in (c.pump(), c.takeSignals()) }
            if !signals.isEmpty { onSignals(signals) }
            if !alive {
                Log.info("notifications: the session bus went away; no more notifications from this process")
                return
            }
            fds[0].revents = 0
            fds[1].revents = 0
            if poll(&fds, 2, -1) < 0 && errno != EINTR {
                Log.warning("notifications: poll on the session bus failed: \(String(cString: strerror(errno)))")
                return
            }
            if fds[1].revents & Int16(POLLIN) != 0 {
                while read(wakeRead, &drain, drain.count) > 0 {}
            }
        }
    }
}
