import Platform

/// How long `run --until-idle` has waited with nothing left in the queue, only for what is
/// still arriving (a file settling in a watched folder): it says so once that has lasted
/// longer than a settle window, and again every minute, so that a file held open by a
/// program does not keep it waiting without a word.
struct ArrivalWait {
    private var since: Double?
    private var told = -Double.infinity

    static let untold = Double(SettleWindow.seconds) + 2
    static let retold = 60.0

    /// Whether to say so now (monotonic seconds); `waiting` false ends the wait.
    mutating func isDue(waiting: Bool, now: Double) -> Bool {
        guard waiting else {
            (since, told) = (nil, -.infinity)
            return false
        }
        let start = since ?? now
        since = start
        guard now - start >= Self.untold, now - told >= Self.retold else { return false }
        told = now
        return true
    }
}
