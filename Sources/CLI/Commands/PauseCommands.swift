import Glibc
import Platform
import Queue

/// `pause` and `resume`: the person holds transfers, or the whole queue, and lets them go on.
/// The hold is written to the queue first, so it works with no agent running; a running agent
/// is rung to stop what the pause covers at its last checkpoint.
public enum PauseCommands {
    /// `pause ID...`: exits 1 for an unknown, completed or failed item (nothing to pause);
    /// the others are paused anyway. `pause --all` pauses the whole queue.
    public static func pause(ids: [Int64], all: Bool, context: CommandContext) throws -> Int32 {
        let store = try context.openStore()
        if all { return try pauseQueue(store, context: context) }
        let (changed, status) = report(try store.pause(ids), verb: "pause", context: context) { "#\($0.id) \($0.name): already paused" }
        let paused = changed.map(\.id)
        let running = changed.filter { $0.state == .inProgress }.map(\.id)
        guard !paused.isEmpty else { return status }
        let still = stopRunning(store, context: context) { try running.filter { try store.transfer(id: $0)?.state == .inProgress } }
        let words = QueueCommands.idWords(paused)
        if still.isEmpty {
            context.say("paused \(words); `instant-upload resume \(paused.map(String.init).joined(separator: " "))` lets \(paused.count == 1 ? "it" : "them") go on")
        } else {
            context.say("paused \(words); the agent is stopping \(QueueCommands.idWords(still)) at its last checkpoint")
        }
        return status
    }

    /// `resume ID...`: exits 1 for an unknown, completed or failed item; one that is not
    /// paused is on its way already (0).
    public static func resume(ids: [Int64], all: Bool, context: CommandContext) throws -> Int32 {
        let store = try context.openStore()
        if all { return try resumeQueue(store, context: context) }
        let queuePaused = try store.isQueuePaused()
        let (changed, status) = report(try store.resume(ids), verb: "resume", context: context) {
            "#\($0.id) \($0.name) is not paused" + (queuePaused ? " on its own" : ": it is on its way")
        }
        let resumed = changed.map(\.id)
        if !resumed.isEmpty {
            context.say("resumed \(QueueCommands.idWords(resumed))")
            if !queuePaused { context.wakeOrStartAgent() }
        }
        if queuePaused {
            context.say("the whole queue is paused: `instant-upload resume --all` lets it go on")
        }
        return status
    }

    static func pauseQueue(_ store: QueueStore, context: CommandContext) throws -> Int32 {
        guard try store.pauseQueue() else {
            context.say("the queue is already paused; `instant-upload resume --all` lets it go on")
            return ExitStatus.ok
        }
        let still = stopRunning(store, context: context) { try store.transfers(state: .inProgress).map(\.id) }
        var words = "paused the queue: nothing starts, new items included, until `instant-upload resume --all`"
        if !still.isEmpty { words += "; the agent is stopping \(QueueCommands.idWords(still)) at its last checkpoint" }
        context.say(words)
        return ExitStatus.ok
    }

    static func resumeQueue(_ store: QueueStore, context: CommandContext) throws -> Int32 {
        let (queueWasPaused, rows) = try store.resumeQueue()
        guard queueWasPaused || rows > 0 else {
            context.say("nothing is paused")
            return ExitStatus.ok
        }
        var parts: [String] = []
        if queueWasPaused { parts.append("the queue goes on") }
        if rows > 0 { parts.append("resumed \(rows) paused transfer\(rows == 1 ? "" : "s")") }
        context.say(parts.joined(separator: "; "))
        context.wakeOrStartAgent()
        return ExitStatus.ok
    }

    /// Rings the agent and waits a little for the running rows the pause covers to stop (they
    /// stop within a second); returns the ones still running. With no agent nothing runs.
    static func stopRunning(_ store: QueueStore, context: CommandContext, running: () throws -> [Int64]) -> [Int64] {
        guard (try? running().isEmpty) == false, context.wakeAgent() else { return [] }
        let deadline = MonotonicClock.seconds() + 5
        var left = (try? running()) ?? []
        while !left.isEmpty, MonotonicClock.seconds() < deadline {
            usleep(50_000)
            left = (try? running()) ?? left
        }
        return left
    }

    /// Says what became of each ID that was not changed (`unchanged` words a row already
    /// so); returns the rows changed, and 1 when an ID was unknown or not moving.
    static func report(_ changes: [QueueStore.PauseChange], verb: String, context: CommandContext,
                       unchanged: (Transfer) -> String) -> (changed: [Transfer], status: Int32) {
        var status = ExitStatus.ok
        var changed: [Transfer] = []
        for change in changes {
            switch change {
            case .missing(let id):
                context.complain("there is no transfer #\(id)")
                status = ExitStatus.attention
            case .notMoving(let row):
                context.complain(notMoving(row, verb: verb))
                status = ExitStatus.attention
            case .unchanged(let row):
                context.say(unchanged(row))
            case .changed(let row):
                changed.append(row)
            }
        }
        return (changed, status)
    }

    /// Why a completed, failed or cancelled row is neither paused nor resumed.
    static func notMoving(_ row: Transfer, verb: String) -> String {
        let what = "#\(row.id) \(row.name)"
        if row.cancelRequested { return "\(what) is being cancelled, so there is nothing to \(verb)" }
        switch row.state {
        case .completed: return "\(what) is already completed, so there is nothing to \(verb)"
        default: return "\(what) has failed, so it is not moving; `instant-upload retry \(row.id)` queues it again"
        }
    }
}
