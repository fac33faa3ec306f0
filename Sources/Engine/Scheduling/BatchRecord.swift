/// The agent's side of `status`'s batch figures: the rate it measures and whether it last
/// saw the queue idle or busy, so the database is written only when something changed.
struct BatchRecord: Sendable {
    /// Seconds between two samples (and two writes) of the rate.
    static let sampleInterval = 1.0

    enum Phase: Sendable { case unknown, idle, busy }

    var throughput = Throughput()
    var phase = Phase.unknown
    var lastSample = -Double.infinity
    /// A rate is in the database (or may be, left by an agent before this one).
    var rateWritten = true
}
