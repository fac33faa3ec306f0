/// The project's one clock for durations and deadlines is `ContinuousClock` (it never goes
/// back, and it keeps counting while the machine sleeps, so a wait that began before a
/// suspend ends after the resume instead of starting over). `MonotonicClock` is the same
/// clock as seconds, for code that does arithmetic on plain numbers; never for dates.
public enum MonotonicClock {
    /// A million seconds before the first reading, so that 0 ("never") is always long ago,
    /// as it is on a clock counted from boot.
    private static let origin = ContinuousClock.now - .seconds(1_000_000)

    /// Seconds on the clock (the value means nothing across processes).
    public static func seconds() -> Double {
        let elapsed = origin.duration(to: .now).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
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
