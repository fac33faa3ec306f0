import Glibc

/// An open file with one owner, closed exactly once: by `close()`, which says whether it
/// worked, or else when the owner lets go (a path that is already failing), where a failed
/// close is logged instead of lost.
///
/// Not Sendable: one thread uses it.
public final class OpenFile {
    public let descriptor: Int32
    public let path: LocalPath
    private var isOpen = true

    /// Opens `path` (close-on-exec always).
    public init(_ path: LocalPath, _ flags: Int32, mode: mode_t = 0) throws(SystemError) {
        descriptor = try FileIO.open(path, flags, mode: mode)
        self.path = path
    }

    deinit {
        guard isOpen else { return }
        do { try FileIO.close(descriptor, path: path) } catch {
            Log.warning("\(error)")
        }
    }

    /// Closes it now and says whether the system took every byte: see `FileIO.close`.
    public func close() throws(SystemError) {
        guard isOpen else { return }
        isOpen = false
        try FileIO.close(descriptor, path: path)
    }

    /// fsync(2): see `FileIO.fsync`.
    public func sync() throws(SystemError) { try FileIO.fsync(descriptor, path: path) }

    public func truncate(to length: Int64) throws(SystemError) { try FileIO.truncate(descriptor, to: length, path: path) }

    public func status() throws(SystemError) -> stat { try FileIO.status(descriptor, path: path) }

    /// The size in bytes, from fstat.
    public func size() throws(SystemError) -> Int64 { Int64(try status().st_size) }
}
