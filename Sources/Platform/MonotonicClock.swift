import Glibc

/// Seconds on the monotonic clock: for durations, never for dates.
public enum MonotonicClock {
    public static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
