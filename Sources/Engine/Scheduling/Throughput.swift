/// Bytes per second summed over every running transfer, over the last few seconds, from the
/// progress the transfers already record: each row's bytes are counted from where it started
/// to where it was last seen or ended, so a batch of files too small to be seen running still
/// counts whole.
struct Throughput: Sendable {
    /// Seconds the rate is measured over.
    var window: Double

    /// Bytes done of each running row when last seen.
    private var lastSeen: [Int64: Int64] = [:]
    /// Bytes moved by every row since the meter started.
    private(set) var moved: Int64 = 0
    private var samples: [(time: Double, moved: Int64)] = []

    init(window: Double = 8) { self.window = window }

    /// The rows being counted.
    var rows: Set<Int64> { Set(lastSeen.keys) }

    /// A row starts with `bytes` already done.
    mutating func started(_ id: Int64, at bytes: Int64) { lastSeen[id] = bytes }

    /// A row's bytes done now. One that went back (started again from zero) counts on from there.
    mutating func saw(_ id: Int64, at bytes: Int64) {
        if let before = lastSeen[id], bytes > before { moved += bytes - before }
        lastSeen[id] = bytes
    }

    /// A row stopped running with `bytes` done (nil when the row is gone).
    mutating func ended(_ id: Int64, at bytes: Int64?) {
        if let bytes { saw(id, at: bytes) }
        lastSeen[id] = nil
    }

    /// Takes a sample at `time` (seconds, monotonic) and returns the rate over the last
    /// `window` seconds; nil until the samples span a second.
    mutating func rate(at time: Double) -> Double? {
        samples.append((time, moved))
        // Keep the newest sample that is at least `window` old as the start of the span.
        while samples.count > 2, time - samples[1].time >= window { samples.removeFirst() }
        guard let first = samples.first, time - first.time >= 1 else { return nil }
        return Double(moved - first.moved) / (time - first.time)
    }

    /// Nothing runs: the next rate is measured afresh.
    mutating func reset() {
        samples.removeAll()
        lastSeen.removeAll()
    }
}
