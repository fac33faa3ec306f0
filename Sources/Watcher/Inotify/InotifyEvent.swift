import Glibc

/// The bits of an inotify mask this project uses, by name.
struct InotifyMask: OptionSet, Sendable, Hashable {
    let rawValue: UInt32

    static let closeWrite = InotifyMask(rawValue: UInt32(IN_CLOSE_WRITE))
    static let movedFrom = InotifyMask(rawValue: UInt32(IN_MOVED_FROM))
    static let movedTo = InotifyMask(rawValue: UInt32(IN_MOVED_TO))
    static let create = InotifyMask(rawValue: UInt32(IN_CREATE))
    static let delete = InotifyMask(rawValue: UInt32(IN_DELETE))
    static let deleteSelf = InotifyMask(rawValue: UInt32(IN_DELETE_SELF))
    static let moveSelf = InotifyMask(rawValue: UInt32(IN_MOVE_SELF))
    // Set by the kernel only.
    static let unmount = InotifyMask(rawValue: UInt32(IN_UNMOUNT))
    static let queueOverflow = InotifyMask(rawValue: UInt32(IN_Q_OVERFLOW))
    static let ignored = InotifyMask(rawValue: UInt32(IN_IGNORED))
    static let isDirectory = InotifyMask(rawValue: UInt32(IN_ISDIR))
    // Flags for inotify_add_watch.
    static let onlyDirectory = InotifyMask(rawValue: UInt32(IN_ONLYDIR))
    static let dontFollow = InotifyMask(rawValue: UInt32(IN_DONT_FOLLOW))
    static let excludeUnlinked = InotifyMask(rawValue: UInt32(IN_EXCL_UNLINK))

    /// What a folder of a watched tree reports: files finished or moved in, folders made,
    /// anything leaving, and the folder itself going away.
    static let treeFolder: InotifyMask = [.closeWrite, .movedFrom, .movedTo, .create, .delete, .deleteSelf, .moveSelf,
                                          .onlyDirectory, .excludeUnlinked]
    /// What the nearest existing parent of a missing folder reports: a child appearing, or
    /// itself going away (then the next parent up is watched).
    static let waitingParent: InotifyMask = [.create, .movedTo, .deleteSelf, .moveSelf, .onlyDirectory]
    /// What each folder above a watched tree reports: only its own move or deletion.
    static let ancestor: InotifyMask = [.deleteSelf, .moveSelf, .onlyDirectory]
}

/// One event read from an inotify descriptor.
struct InotifyEvent: Sendable, Equatable {
    /// The watch descriptor, or -1 for `IN_Q_OVERFLOW`.
    var watch: Int32
    var mask: InotifyMask
    /// Pairs an `IN_MOVED_FROM` with its `IN_MOVED_TO`.
    var cookie: UInt32
    /// The entry's name inside the watched folder; nil for events about the folder itself.
    var name: [UInt8]?

    /// Splits what `read(2)` returned into events. A record that does not fit what is left
    /// ends the list instead of being read past the end: the kernel never writes one, but
    /// a bug here must not become a read out of bounds.
    static func parse(_ buffer: UnsafeRawBufferPointer) -> [InotifyEvent] {
        let header = 16  // wd, mask, cookie, len: four 32-bit fields
        var events: [InotifyEvent] = []
        var offset = 0
        while buffer.count - offset >= header {
            let wd = buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = buffer.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            guard length <= buffer.count - offset - header else { break }
            var name: [UInt8]?
            if length > 0 {
                // The name is NUL-padded to an alignment boundary.
                let raw = buffer[(offset + header)..<(offset + header + length)]
                let bytes = Array(raw.prefix { $0 != 0 })
                name = bytes.isEmpty ? nil : bytes
            }
            events.append(InotifyEvent(watch: wd, mask: InotifyMask(rawValue: mask), cookie: cookie, name: name))
            offset += header + length
        }
        return events
    }
}
