/// Per-row speeds from how far rows moved over the last few seconds: steady enough to read,
/// recent enough to follow a change of pace. A row that moved nothing for the whole window
/// reads 0 (stalled); one seen for less than a second has no speed yet.
struct RateMeter: Sendable {
    /// Seconds of samples kept per row.
    var window: Double = 5

    private var samples: [Int64: [(time: Double, bytes: Int64)]] = [:]

    init(window: Double = 5) { self.window = window }

    /// Adds this moment's byte counts of the rows in progress and returns their speeds in
    /// bytes per second. Rows no longer given are forgotten.
    mutating func update(_ bytesByRow: [Int64: Int64], at time: Double) -> [Int64: Double] {
        var speeds: [Int64: Double] = [:]
        var kept: [Int64: [(time: Double, bytes: Int64)]] = [:]
        for (id, bytes) in bytesByRow {
            var list = samples[id] ?? []
            // A row that went back (a restart from zero) starts its history again.
            if let last = list.last, bytes < last.bytes { list = [] }
            list.append((time, bytes))
            while list.count > 2, let first = list.first, time - first.time > window { list.removeFirst() }
            kept[id] = list
            if let first = list.first, time - first.time >= 1 {
                speeds[id] = Double(bytes - first.bytes) / (time - first.time)
            }
        }
        samples = kept
        return speeds
    }
}
