import CSystem
import Glibc

/// One end of a pipe to a child process, closed when the last reference goes (or by `close()`).
public final class PipeEnd: Sendable {
    public let fileDescriptor: Int32
    /// Whether the descriptor is still open: closed once, by whichever comes first.
    private let isOpen = Locked(true)

    /// Takes ownership of `fileDescriptor`.
    public init(fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

    deinit { close() }

    /// Closes the descriptor now; later calls do nothing.
    public func close() {
        let wasOpen = isOpen.withLock { open in
            defer { open = false }
            return open
        }
        if wasOpen { _ = Glibc.close(fileDescriptor) }
    }

    /// Waits for bytes and returns what one read gives, up to `limit`; empty at the end.
    public func readAvailable(limit: Int = 64 * 1024) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, limit) }
            if n >= 0 { return Array(buffer[0..<n]) }
            if errno != EINTR { return [] }
        }
    }

    /// Everything until the other end is closed.
    public func readToEnd() -> [UInt8] {
        var all: [UInt8] = []
        while true {
            let chunk = readAvailable()
            if chunk.isEmpty { return all }
            all += chunk
        }
    }

    /// Writes all of `bytes`; false when the other end is gone (a child that exited without
    /// reading), which never raises SIGPIPE: that would end a command before it said why.
    @discardableResult
    public func write(_ bytes: some Collection<UInt8>) -> Bool {
        let bytes = Array(bytes)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { csystem_write_nosigpipe(fileDescriptor, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 { if errno == EINTR { continue }; return false }
            done += n
        }
        return true
    }
}
