import CSystem
import Glibc

/// An eventfd one thread writes to wake another out of `poll`.
///
/// A class so the descriptor is closed once, when neither the stopper nor the monitor
/// thread holds it any more; closing it early could let a new file reuse the number.
public final class WakeUp: Sendable {
    public let fd: Int32

    public init() throws(SystemError) {
        fd = try valueOrErrno("eventfd") { csystem_eventfd() }
    }

    deinit { close(fd) }

    public func signal() {
        var one: UInt64 = 1
        _ = write(fd, &one, MemoryLayout<UInt64>.size)
    }

    /// Resets the count, so the next `poll` sleeps until the next `signal()`.
    public func drain() {
        var count: UInt64 = 0
        _ = read(fd, &count, MemoryLayout<UInt64>.size)
    }
}
