import Glibc

/// Seconds on the monotonic clock: for durations, never for dates.
public enum MonotonicClock {
    public static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

extension ContinuousClock {
    /// `poll(2)`'s timeout until `deadline`: -1 (wait for an event) without one, 0 once it
    /// has passed, otherwise the milliseconds left, rounded up so the wait never ends early.
    public func pollTimeout(until deadline: Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let remaining = now.duration(to: deadline)
        guard remaining > .zero else { return 0 }
        return Int32(saturating: (remaining / .milliseconds(1)).rounded(.up))
    }
}
