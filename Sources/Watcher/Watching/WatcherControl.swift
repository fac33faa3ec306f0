import Platform

/// What a `FolderWatcher` (on any thread) and its loop (on its own thread) share: the
/// requests going in, the status coming out, and the eventfd that carries the requests.
final class WatcherControl: Sendable {
    private struct State {
        var stopRequested = false
        var scanRequested = false
        var lookAgain: [LocalPath] = []
        /// Requests taken by the loop whose outcome the status does not show yet.
        var requestsInHand = false
        var status = WatcherStatus()
    }

    private let state = Locked(State())
    let wakeUp: WakeUp

    init(wakeUp: WakeUp) { self.wakeUp = wakeUp }

    var status: WatcherStatus { state.withLock { $0.status } }

    /// Nothing asked of the loop is still to be done, and its last status says the tree is
    /// quiet (see `WatcherStatus.quiet`).
    var isQuiet: Bool {
        state.withLock { !$0.scanRequested && $0.lookAgain.isEmpty && !$0.requestsInHand && $0.status.quiet }
    }

    func requestStop() {
        state.withLock { $0.stopRequested = true }
        wakeUp.signal()
    }

    func requestScan() {
        state.withLock { $0.scanRequested = true }
        wakeUp.signal()
    }

    func requestLook(at paths: [LocalPath]) {
        state.withLock { $0.lookAgain += paths }
        wakeUp.signal()
    }

    /// The requests made since the last call, cleared.
    func takeRequests() -> (stop: Bool, scan: Bool, look: [LocalPath]) {
        wakeUp.drain()
        return state.withLock { s in
            defer { s.scanRequested = false; s.lookAgain = [] }
            if s.scanRequested || !s.lookAgain.isEmpty { s.requestsInHand = true }
            return (s.stopRequested, s.scanRequested, s.lookAgain)
        }
    }

    /// Stores `status`, which shows what the requests taken so far did; true when its
    /// state, troubles or files held back differ from the last one stored, or a walk of the
    /// tree was done since (after an overflow, periodic): what the owner does after a walk
    /// (Local Drive's look for tracked files gone while events were lost) must not wait for
    /// the state to change.
    func publish(_ status: WatcherStatus) -> Bool {
        state.withLock { s in
            defer { s.status = status; s.requestsInHand = false }
            return s.status.state != status.state || s.status.troubles != status.troubles || s.status.scans != status.scans
                || s.status.waiting != status.waiting
        }
    }
}
