import Platform
import Queue

/// What the rules' watchers (on their threads) and the agent tell the service's own
/// thread, in the order they told it; an eventfd rings that thread when something comes.
final class WatchInbox: Sendable {
    enum Message: Sendable {
        /// A rule's watcher handed over a new file.
        case found(rule: String, FoundFile)
        /// A file (or folder) the rule took was renamed within its folder.
        case moved(rule: String, from: LocalPath, to: LocalPath)
        /// Two files the rule took swapped names.
        case exchanged(rule: String, LocalPath, LocalPath)
        /// A file the rule's watcher saw could not be taken now, and why.
        case notQueued(rule: String, LocalPath, reason: String)
        /// The files that were there when the rule's folder was first walked: its baseline.
        case baseline(rule: String, [(LocalPath, FileFingerprint)])
        /// A file system on `device` was seen mounted on a rule's folder for the first time.
        case mounted(folder: LocalPath, device: UInt64)
        /// The watcher's state or troubles changed, or it found a part it cannot read.
        case status(rule: String)
        /// An upload completed (its row as recorded).
        case completed(Transfer)
        /// Another process rang the agent's doorbell: the config and the accounts may
        /// have changed.
        case lookAgain
    }

    private struct State {
        var messages: [Message] = []
        /// Messages taken and not handled yet (`handled`).
        var inHand = false
        var stop = false
    }

    private let state = Locked(State())
    let wakeUp: WakeUp

    init() throws(SystemError) { wakeUp = try WakeUp() }

    func post(_ message: Message) {
        state.withLock { $0.messages.append(message) }
        wakeUp.signal()
    }

    func requestStop() {
        state.withLock { $0.stop = true }
        wakeUp.signal()
    }

    /// Everything posted since the last call, and whether the service is to stop. They
    /// count as in hand until `handled`.
    func take() -> (messages: [Message], stop: Bool) {
        wakeUp.drain()
        return state.withLock { s in
            defer { s.messages = [] }
            if !s.messages.isEmpty { s.inHand = true }
            return (s.messages, s.stop)
        }
    }

    /// Everything taken so far is handled (the files found are in the queue).
    func handled() { state.withLock { $0.inHand = false } }

    /// Nothing posted waits to be taken or handled.
    var isEmpty: Bool { state.withLock { $0.messages.isEmpty && !$0.inHand } }
}
