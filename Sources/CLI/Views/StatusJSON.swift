import Queue

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
    public var directions: Directions
    /// What keeps watch rules from their job (a folder missing, out of inotify watches...).
    public var watchTroubles: [WatchTrouble]

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
        case total, queued, retrying, completed, failed, directions
        case inProgress = "in_progress"
        case needAttention = "need_attention"
        case pausedReason = "paused_reason"
        case agentRunning = "agent_running"
        case watchTroubles = "watch_troubles"
    }

    /// The counts of `summary`; `agentRunning` is whether an agent answered on the control socket.
    public init(summary: QueueSummary, agentRunning: Bool, watchTroubles: [WatchTrouble] = []) {
        let all = Counts(summary, nil)
        total = all.total; queued = all.queued; inProgress = all.inProgress
        retrying = all.retrying; completed = all.completed; failed = all.failed
        needAttention = summary.needAttention
        pausedReason = summary.pausedReason
        self.agentRunning = agentRunning
        directions = Directions(upload: Counts(summary, .upload), download: Counts(summary, .download))
        self.watchTroubles = watchTroubles
    }

    /// Written by hand so an absent `paused_reason` is `null`, not a missing key.
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
        try c.encode(directions, forKey: .directions)
        try c.encode(watchTroubles, forKey: .watchTroubles)
    }
}
