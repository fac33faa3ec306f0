import Glibc

/// Milliseconds since the epoch: the queue's unit of time, and the times people are shown.
public func nowMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return ts.milliseconds
}
