import CSystem
import Glibc
import Platform

/// An eventfd one thread writes to wake another out of `poll`.
///
/// A class so the descriptor is closed once, when neither the stopper nor the monitor
/// thread holds it any more; closing it early could let a new file reuse the number.
final class WakeUp: Sendable {
    let fd: Int32

    init() throws(SystemError) {
        fd = try valueOrErrno("eventfd") { csystem_eventfd() }
    }

    deinit { close(fd) }

    func signal() {
        var one: UInt64 = 1
        _ = write(fd, &one, MemoryLayout<UInt64>.size)
    }
}
