import Dispatch
import Glibc
import Platform

/// Watches rtnetlink and reports when the machine goes online or offline, or starts
/// leaving by another interface.
///
/// One thread of its own sleeps in `poll` on a netlink socket joined to the link and
/// route groups, and on an eventfd that `stop()` rings. Any event starts a short quiet
/// window (a link flap is a burst of messages); then the state is read again in full
/// and the handler hears about it if `isOnline` or the default interface changed.
public final class ConnectivityMonitor: Sendable {
    public typealias Handler = @Sendable (NetworkState) -> Void

    private let handler: Handler
    private let debounce: Duration
    private let namespace: NetworkNamespace?
    private let running = Locked<Running?>(nil)
    private let latest = Locked<NetworkState?>(nil)

    private struct Running: Sendable {
        var thread: DedicatedThread
        var wakeUp: WakeUp
    }

    /// A monitor of this machine's network. `handler` runs on the monitor's thread: once
    /// with the first state when started, then after every change of `isOnline` or
    /// `defaultInterface`. Keep it short; hand work to the scheduler.
    public convenience init(debounce: Duration = .milliseconds(100), onChange handler: @escaping Handler) {
        self.init(namespace: nil, debounce: debounce, onChange: handler)
    }

    /// A monitor of another network namespace: its thread enters `namespace` before it
    /// opens any socket, since netlink sockets report the namespace they were opened in.
    init(namespace: NetworkNamespace?, debounce: Duration = .milliseconds(100), onChange handler: @escaping Handler) {
        self.namespace = namespace
        self.debounce = debounce
        self.handler = handler
    }

    /// The state last read; nil before `start()`.
    public var state: NetworkState? { latest.withLock { $0 } }

    /// Opens the sockets, reads the first state and starts watching. Returns once the
    /// first state is known (`state` is set); throws if the sockets or that first read
    /// fail. Does nothing if already started.
    public func start() throws(SystemError) {
        try running.withLock { (running: inout Running?) throws(SystemError) in
            if running != nil { return }
            let wakeUp = try WakeUp()
            let startup = Startup()
            let thread = try DedicatedThread { [self] in watch(wakeUp: wakeUp, startup: startup) }
            switch startup.wait() {
            case .success:
                running = Running(thread: thread, wakeUp: wakeUp)
            case .failure(let error):
                thread.join()
                throw error
            }
        }
    }

    /// Stops watching. When it returns the handler is not running and will not run again,
    /// unless it was called from the handler itself, where the thread ends right after.
    /// A started monitor keeps its thread (and itself) alive until this is called.
    public func stop() {
        guard let run = running.withLock({ (running: inout Running?) -> Running? in
            defer { running = nil }
            return running
        }) else { return }
        run.wakeUp.signal()
        if run.thread.isCurrent { run.thread.detach() } else { run.thread.join() }
    }

    // MARK: - The monitor's thread

    private func watch(wakeUp: WakeUp, startup: Startup) {
        let events: NetlinkSocket, queries: NetlinkSocket
        let first: NetworkState
        do throws(SystemError) {
            if let namespace { try namespace.enterOnCurrentThread() }
            // Subscribe before the first read, so no change can slip in between the two.
            events = try NetlinkSocket(groups: NetlinkSocket.Groups.connectivity)
            queries = try NetlinkSocket()
            first = try NetworkState.read(from: queries)
        } catch {
            startup.finish(.failure(error))
            return
        }
        latest.withLock { $0 = first }
        startup.finish(.success(()))
        Log.info("network: \(first)")
        handler(first)

        var reported = first.summary
        let clock = ContinuousClock()
        var readAt: ContinuousClock.Instant?
        var fds = [pollfd(fd: events.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeUp.fd, events: Int16(POLLIN), revents: 0)]
        while true {
            let timeout = clock.pollTimeout(until: readAt)
            if poll(&fds, nfds_t(fds.count), timeout) < 0 {
                let error = SystemError("poll")
                if error.errno == EINTR { continue }
                Log.error("connectivity: \(error); retrying in 1 s")
                sleep(1)
                continue
            }
            if fds[1].revents != 0 { return }
            if fds[0].revents != 0 {
                do throws(SystemError) {
                    if try events.drain() != .nothing, readAt == nil { readAt = clock.now.advanced(by: debounce) }
                } catch {
                    Log.error("connectivity: \(error); reading the state again in 1 s")
                    readAt = clock.now.advanced(by: .seconds(1))
                    sleep(1)
                }
            }
            guard let due = readAt, clock.now >= due else { continue }
            readAt = nil
            do throws(SystemError) {
                let state = try NetworkState.read(from: queries)
                latest.withLock { $0 = state }
                if state.summary != reported {
                    reported = state.summary
                    Log.info("network: \(state)")
                    handler(state)
                }
            } catch {
                Log.warning("connectivity: cannot read the network state: \(error); trying again in 1 s")
                readAt = clock.now.advanced(by: .seconds(1))
            }
        }
    }
}

/// How the monitor's thread tells `start()` whether it got going.
private final class Startup: Sendable {
    private let result = Locked<Result<Void, SystemError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ outcome: Result<Void, SystemError>) {
        result.withLock { $0 = outcome }
        done.signal()
    }

    func wait() -> Result<Void, SystemError> {
        done.wait()
        return result.withLock { $0! }
    }
}
