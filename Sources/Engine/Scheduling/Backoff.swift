import Platform
import Queue

/// How long a row waits before its next attempt. Every retry passes through here, also
/// the ones that would like to go at once (a `Retry-After: 0`, an upload started again from
/// zero), so no path can spin.
///
/// - Ordinary failures: exponential backoff with full jitter, capped: the n-th retry waits
///   a random time between `floor` and `min(cap, base * 2^n)`, so many clients never retry
///   in step. A server's `Retry-After` wins over the jitter, but never below `floor`.
/// - Restarts from zero: the first `quickRestarts` in a row wait about `floor`; each one
///   after that waits `restartPause`, doubling up to `restartCap`, and the row's reason
///   says so.
public struct Backoff: Sendable {
    public var base: Double = 1
    public var cap: Double = 60
    /// No retry comes sooner than this.
    public var floor: Double = 1
    /// Restarts in a row that go ahead after about `floor`.
    public var quickRestarts = 3
    public var restartPause: Double = 60
    public var restartCap: Double = 900

    public init(base: Double = 1, cap: Double = 60, floor: Double = 1) {
        self.base = base
        self.cap = cap
        self.floor = floor
    }

    /// The ceiling for attempt `attempt` (1-based).
    public func ceiling(attempt: Int) -> Double {
        min(cap, base * Double(1 << min(max(attempt - 1, 0), 20)))
    }

    /// Seconds to wait before attempt `attempt + 1`.
    public func delay<R: RandomNumberGenerator>(attempt: Int, retryAfter: Double? = nil, using rng: inout R) -> Double {
        if let retryAfter { return max(floor, retryAfter) }
        return Double.random(in: floor...max(floor, ceiling(attempt: attempt)), using: &rng)
    }

    public func delay(attempt: Int, retryAfter: Double? = nil) -> Double {
        var rng = SystemRandomNumberGenerator()
        return delay(attempt: attempt, retryAfter: retryAfter, using: &rng)
    }

    /// Seconds to wait after the `restarts`-th restart from zero in a row.
    public func restartDelay<R: RandomNumberGenerator>(restarts: Int, retryAfter: Double? = nil, using rng: inout R) -> Double {
        let quick = Double.random(in: floor...(2 * floor), using: &rng)
        guard restarts > quickRestarts else { return max(quick, retryAfter ?? 0) }
        let doublings = min(restarts - quickRestarts - 1, 20)
        return max(min(restartCap, restartPause * Double(1 << doublings)), retryAfter ?? 0)
    }

    /// The wait before the next attempt, and the reason the row shows meanwhile.
    public func wait<R: RandomNumberGenerator>(after classification: Classification, attempt: Int,
                                               using rng: inout R) -> (seconds: Double, reason: Reason) {
        guard let restarts = classification.restarts else {
            return (delay(attempt: attempt, retryAfter: classification.retryAfter, using: &rng), classification.reason)
        }
        let seconds = restartDelay(restarts: restarts, retryAfter: classification.retryAfter, using: &rng)
        var reason = classification.reason
        if restarts > quickRestarts {
            reason.message += "; started again \(restarts) times in a row, so it waits \(Self.spoken(seconds)) before the next try"
        }
        return (seconds, reason)
    }

    public func wait(after classification: Classification, attempt: Int) -> (seconds: Double, reason: Reason) {
        var rng = SystemRandomNumberGenerator()
        return wait(after: classification, attempt: attempt, using: &rng)
    }

    static func spoken(_ seconds: Double) -> String {
        seconds < 120 ? "\(Int(saturating: seconds.rounded())) s" : "\(Int(saturating: (seconds / 60).rounded())) min"
    }
}
