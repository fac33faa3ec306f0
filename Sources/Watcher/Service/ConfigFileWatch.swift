import Glibc
import Platform

/// Hears the config file change, so new, changed, paused and removed rules apply without
/// a restart: an inotify watch on the config's folder (editors and `watch add` replace the
/// file by renaming a new one over it, which a watch on the file itself would not survive).
/// Its descriptor joins the service thread's `poll`; nothing is read while nothing changes.
final class ConfigFileWatch {
    let file: LocalPath
    private let inotify: Inotify
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Inotify.bufferSize, alignment: 8)

    /// Watches the folder of `file`, creating it (0700) if it is not there yet.
    init(file: String) throws {
        self.file = LocalPath(file)
        let folder = self.file.parent
        if !FileIO.exists(folder.text) { try PrivateFolder.prepare(folder.text, role: .config) }
        inotify = try Inotify()
        _ = try inotify.addWatch(folder, mask: [.closeWrite, .movedTo, .movedFrom, .delete, .create, .onlyDirectory])
    }

    deinit { buffer.deallocate() }

    var fd: Int32 { inotify.fd }

    /// Reads what woke the poll; true when the config file itself was written, replaced or
    /// removed (or events were lost, so it may have been).
    func changed() -> Bool {
        let name = file.lastComponent.bytes
        var changed = false
        while let events = try? inotify.read(into: buffer), !events.isEmpty {
            for event in events {
                if event.mask.contains(.queueOverflow) || event.mask.contains(.ignored) { changed = true }
                // A new, still empty file (IN_CREATE) is read when it is closed.
                if event.name == name, !event.mask.contains(.create) { changed = true }
            }
        }
        return changed
    }
}
