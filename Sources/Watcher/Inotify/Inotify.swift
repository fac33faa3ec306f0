import Glibc
import Platform

/// One inotify instance: the only place that calls inotify(7).
///
/// Opened close-on-exec and nonblocking. The watcher's thread sleeps in `poll` on `fd`
/// and reads everything queued when it wakes. Sendable because it holds nothing but the
/// descriptor, which is closed once, when the last owner lets go.
final class Inotify: Sendable {
    let fd: Int32

    /// A new instance. The kernel sizes its event queue from `fs.inotify.max_queued_events`
    /// at this moment; a later change of the setting does not affect it.
    init() throws(InotifyError) {
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw InotifyError(SystemError("inotify_init1")) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Watches `folder` for `mask` and returns the watch descriptor. Watching a folder that
    /// is already watched returns its descriptor again, with the new mask.
    func addWatch(_ folder: LocalPath, mask: InotifyMask) throws(InotifyError) -> Int32 {
        while true {
            let wd = folder.withCString { inotify_add_watch(fd, $0, mask.rawValue) }
            if wd >= 0 { return wd }
            if errno == EINTR { continue }
            throw InotifyError(SystemError("inotify_add_watch", path: folder.display))
        }
    }

    /// Stops a watch. The kernel then queues `IN_IGNORED` for it. A watch the kernel
    /// already dropped (its folder was deleted) is not an error.
    func removeWatch(_ wd: Int32) {
        _ = inotify_rm_watch(fd, wd)
    }

    /// Reads the events queued now into `buffer`; empty when there are none.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InotifyError) -> [InotifyEvent] {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n > 0 { return InotifyEvent.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) }
            if n == 0 { return [] }
            switch errno {
            case EINTR: continue
            case EAGAIN: return []
            default: throw InotifyError(SystemError("read inotify"))
            }
        }
    }

    /// Enough for any one event (a header and a name of up to NAME_MAX bytes) many times over.
    static let bufferSize = 64 * 1024
}
