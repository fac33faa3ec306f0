import CSystem
import Glibc

/// Writes a long file back to the disk while it is still being written, so that the fsync
/// at its end finds little left to do.
///
/// Left alone, the kernel holds a download's pages in memory and writes them when it
/// pleases, and the fsync that makes the file durable then waits for most of the file at
/// once, with nothing else going on (a 1 GiB download spent a third of its time there).
/// Here each full window starts on its way to the disk as soon as it is written, and the
/// window before it is waited for, so the disk works beside the network and at most two
/// windows are ever waiting. Errors are left to the fsync, which reports them for the
/// whole file.
public struct WriteBehind {
    public static let window: Int64 = 8 << 20
    private let fd: Int32
    /// Where the window not yet sent to the disk begins, and how far the file is written.
    private var start: Int64
    private var position: Int64

    /// For `fd`, written from `position` on.
    public init(fd: Int32, from position: Int64) {
        self.fd = fd
        start = position
        self.position = position
    }

    /// `count` more bytes were written at the end.
    public mutating func wrote(_ count: Int) {
        position += Int64(count)
        while position - start >= Self.window {
            _ = csystem_write_back(fd, start, Self.window, 0)
            if start >= Self.window { _ = csystem_write_back(fd, start - Self.window, Self.window, 1) }
            start += Self.window
        }
    }
}
