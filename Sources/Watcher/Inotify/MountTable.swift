import Glibc
import Platform

/// `/proc/self/mountinfo`, held open only to be told that something was mounted or
/// unmounted: the kernel flags it `POLLPRI | POLLERR` after every change of the mount
/// table, and each `poll` that reports a change also acknowledges it. Nothing is read.
///
/// inotify says nothing when a card is mounted on an empty folder, so this is how a
/// watcher learns that its missing folder may be back.
final class MountTable: Sendable {
    let fd: Int32

    init(path: String = "/proc/self/mountinfo") throws(SystemError) {
        fd = try valueOrErrno("open", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
    }

    deinit { close(fd) }

    /// What to ask `poll` for: a change, never "readable" (the file always is).
    static let pollEvents = Int16(POLLPRI)

    /// Whether `revents` from `poll` says the table changed.
    static func changed(_ revents: Int16) -> Bool { revents & Int16(POLLPRI | POLLERR) != 0 }
}

extension MountTable {
    /// The mount points listed in a mountinfo text (the fifth field, with the kernel's
    /// octal escapes for space, tab, newline and backslash undone).
    static func mountPoints(in text: [UInt8]) -> [LocalPath] {
        text.split(separator: UInt8(ascii: "\n")).compactMap { line in
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5 else { return nil }
            return LocalPath(bytes: unescape(Array(fields[4])))
        }
    }

    /// Reads the current mount points from `path`; empty when it cannot be read.
    static func mountPoints(from path: String) -> [LocalPath] {
        guard let text = try? FileIO.readBytes(path, limit: 16 << 20) else { return [] }
        return mountPoints(in: text)
    }

    private static func unescape(_ field: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < field.count {
            if field[i] == UInt8(ascii: "\\"), i + 3 < field.count,
               field[(i + 1)...(i + 3)].allSatisfy({ (0x30...0x37).contains($0) }) {
                let value = field[(i + 1)...(i + 3)].reduce(0) { $0 * 8 + Int($1 - 0x30) }
                if value <= 0xFF { out.append(UInt8(value)); i += 4; continue }
            }
            out.append(field[i])
            i += 1
        }
        return out
    }
}
