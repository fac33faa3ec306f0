/// Exponential backoff with full jitter, capped: the n-th retry waits a random time between
/// zero and `min(cap, base * 2^n)`, so many clients never retry in step.
public struct Backoff: Sendable {
    public var base: Double = 1
    public var cap: Double = 60

    public init(base: Double = 1, cap: Double = 60) {
        self.base = base
        self.cap = cap
    }

    /// The ceiling for attempt `attempt` (1-based).
    public func ceiling(attempt: Int) -> Double {
        min(cap, base * Double(1 << min(max(attempt - 1, 0), 20)))
    }

    /// Seconds to wait before attempt `attempt + 1`. A server's `Retry-After` wins over the
    /// jitter, but never beyond the cap unless the server asked for more.
    public func delay<R: RandomNumberGenerator>(attempt: Int, retryAfter: Double? = nil, using rng: inout R) -> Double {
        if let retryAfter { return retryAfter }
        let ceiling = ceiling(attempt: attempt)
        // Never zero: a server that just reset us deserves a breath.
        return max(0.1, Double.random(in: 0...ceiling, using: &rng))
    }

    public func delay(attempt: Int, retryAfter: Double? = nil) -> Double {
        var rng = SystemRandomNumberGenerator()
        return delay(attempt: attempt, retryAfter: retryAfter, using: &rng)
    }
}
