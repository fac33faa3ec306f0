import Queue
import Watcher

/// `instant-upload status --json`: the counts behind the status line.
public struct StatusJSON: Codable, Sendable, Equatable {
    public var total: Int
    public var queued: Int
    public var inProgress: Int
    public var retrying: Int
    public var completed: Int
    public var failed: Int
    public var needAttention: Int
    /// What the agent says holds the queue (`offline`, `wifi`, a sentence), or null.
    public var pausedReason: String?
    public var agentRunning: Bool
    /// The running agent's process ID, or null.
    public var agentPID: Int32?
    public var directions: Directions
    /// The work since the queue was last idle.
    public var batch: Batch
    /// What keeps watch rules from their job (a folder missing, out of inotify watches...).
    public var watchTroubles: [WatchTrouble]
    /// Files watch rules hold back for now (still open for writing, not whole).
    public var watchWaiting: [WatchWaiting]
    /// The batch's files taken as they were after waiting for them to be finished (see
    /// `Transfer.takenNote`): the first few, and how many in all.
    public var takenAsItWas: [TakenAsItWas]
    public var takenAsItWasCount: Int

    /// One such file: its item's number, its path, and why.
    public struct TakenAsItWas: Codable, Sendable, Equatable {
        public var id: Int64
        public var path: String
        public var note: String
    }

    /// One file a watch rule holds back; `since` and `until` in ISO 8601, UTC.
    public struct WatchWaiting: Codable, Sendable, Equatable {
        public var rule: String
        public var code: String
        public var path: String
        public var message: String
        public var since: String
        public var until: String
    }

    /// One trouble of one watch rule.
    public struct WatchTrouble: Codable, Sendable, Equatable {
        public var rule: String
        public var code: String
        public var message: String
        public var action: String

        public init(rule: String, code: String, message: String, action: String) {
            self.rule = rule; self.code = code; self.message = message; self.action = action
        }
    }

    /// The current batch: files and bytes done of total, the agent's rate, the time left.
    public struct Batch: Codable, Sendable, Equatable {
        public var filesDone: Int
        public var filesTotal: Int
        public var bytesDone: Int64
        public var bytesTotal: Int64
        /// Null until the agent has measured a rate while something moves.
        public var rateBytesPerSecond: Double?
        /// Whole seconds, rounded up; null without a rate.
        public var etaSeconds: Int64?

        enum CodingKeys: String, CodingKey {
            case filesDone = "files_done"
            case filesTotal = "files_total"
            case bytesDone = "bytes_done"
            case bytesTotal = "bytes_total"
            case rateBytesPerSecond = "rate_bytes_per_s"
            case etaSeconds = "eta_seconds"
        }

        init(_ b: BatchFigures) {
            filesDone = b.filesDone; filesTotal = b.filesTotal; bytesDone = b.bytesDone; bytesTotal = b.bytesTotal
            rateBytesPerSecond = b.active > 0 ? b.rate : nil
            etaSeconds = b.active > 0 ? b.eta.map { Int64(saturating: $0.rounded(.up)) } : nil
        }

        /// Written by hand so unknown figures are `null`, not missing keys.
        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(filesDone, forKey: .filesDone)
            try c.encode(filesTotal, forKey: .filesTotal)
            try c.encode(bytesDone, forKey: .bytesDone)
            try c.encode(bytesTotal, forKey: .bytesTotal)
            try c.encode(rateBytesPerSecond, forKey: .rateBytesPerSecond)
            try c.encode(etaSeconds, forKey: .etaSeconds)
        }
    }

    /// Counts for one direction.
    public struct Counts: Codable, Sendable, Equatable {
        public var total: Int
        public var queued: Int
        public var inProgress: Int
        public var retrying: Int
        public var completed: Int
        public var failed: Int

        enum CodingKeys: String, CodingKey {
            case total, queued, retrying, completed, failed
            case inProgress = "in_progress"
        }

        init(_ summary: QueueSummary, _ direction: Direction?) {
            total = summary.total(direction)
            queued = summary.count(.queued, direction)
            inProgress = summary.count(.inProgress, direction)
            retrying = summary.count(.retrying, direction)
            completed = summary.count(.completed, direction)
            failed = summary.count(.failed, direction)
        }
    }

    public struct Directions: Codable, Sendable, Equatable {
        public var upload: Counts
        public var download: Counts
    }

    enum CodingKeys: String, CodingKey {
        case total, queued, retrying, completed, failed, directions, batch
        case inProgress = "in_progress"
        case needAttention = "need_attention"
        case pausedReason = "paused_reason"
        case agentRunning = "agent_running"
        case agentPID = "agent_pid"
        case watchTroubles = "watch_troubles"
        case watchWaiting = "watch_waiting"
        case takenAsItWas = "taken_as_it_was"
        case takenAsItWasCount = "taken_as_it_was_count"
    }

    /// The counts of `summary` and the figures of `batch`; `agentPID` is the agent that
    /// answered on the control socket, if one did.
    public init(summary: QueueSummary, batch: BatchFigures = BatchFigures(), agentPID: Int32?, watchTroubles: [WatchTrouble] = [],
                watchWaiting: [(rule: String, held: HeldBack)] = []) {
        let all = Counts(summary, nil)
        total = all.total; queued = all.queued; inProgress = all.inProgress
        retrying = all.retrying; completed = all.completed; failed = all.failed
        needAttention = summary.needAttention
        pausedReason = summary.pausedReason
        agentRunning = agentPID != nil
        self.agentPID = agentPID
        directions = Directions(upload: Counts(summary, .upload), download: Counts(summary, .download))
        self.batch = Batch(batch)
        takenAsItWas = batch.takenAsItWasFirst.map { TakenAsItWas(id: $0.id, path: $0.path.text, note: $0.note) }
        takenAsItWasCount = batch.takenAsItWas
        self.watchTroubles = watchTroubles
        self.watchWaiting = watchWaiting.flatMap { rule, held in
            held.files.map { WatchWaiting(rule: rule, code: $0.code, path: $0.path, message: $0.message,
                                          since: HumanFormat.iso8601($0.since), until: HumanFormat.iso8601($0.until)) }
        }
    }

    /// Written by hand so an absent `paused_reason` or `agent_pid` is `null`, not a missing key.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(total, forKey: .total)
        try c.encode(queued, forKey: .queued)
        try c.encode(inProgress, forKey: .inProgress)
        try c.encode(retrying, forKey: .retrying)
        try c.encode(completed, forKey: .completed)
        try c.encode(failed, forKey: .failed)
        try c.encode(needAttention, forKey: .needAttention)
        try c.encode(pausedReason, forKey: .pausedReason)
        try c.encode(agentRunning, forKey: .agentRunning)
        try c.encode(agentPID, forKey: .agentPID)
        try c.encode(directions, forKey: .directions)
        try c.encode(batch, forKey: .batch)
        try c.encode(watchTroubles, forKey: .watchTroubles)
        try c.encode(watchWaiting, forKey: .watchWaiting)
        try c.encode(takenAsItWas, forKey: .takenAsItWas)
        try c.encode(takenAsItWasCount, forKey: .takenAsItWasCount)
    }
}
