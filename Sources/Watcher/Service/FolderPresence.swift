import Glibc
import Platform

/// How a rule's folder is away, so that its files wait for it rather than fail as gone.
public enum FolderAbsence: Sendable, Equatable {
    /// The folder does not exist: a card taken out (its folder under `/media` goes with it),
    /// a disk unmounted, the folder moved away.
    case missing
    /// The folder is there, but the card or disk its files were on is no longer mounted on
    /// it: a fixed mount point (an fstab entry such as `/mnt/card`) stays behind, empty.
    case unmounted
}

/// Whether a rule's folder is there to read its files from.
///
/// A folder that does not exist is away. A fixed mount point is harder: unmounted, it is
/// an ordinary empty folder, and a photo queued from the card looks deleted. A queued file
/// records the device it was on; when it is not found, the card is out only if all of
/// these hold: the folder was a mount point of that device (seen so while it was watched,
/// or listed as a mount point in `/etc/fstab`), it mounts nothing now and holds nothing.
/// A device number alone is not enough: btrfs and FUSE mounts may get another after a
/// reboot, and a folder emptied by the person is not a card taken out. The folder is then
/// remembered as away until a file system is mounted on it again or anything is put in it.
/// The mount points seen are kept in the queue database, so a card taken out while the
/// agent was stopped is known too.
///
/// Shared by the scheduler's threads (the rule gates, the transfers' outcomes) and the
/// watchers' (`note`).
final class FolderPresence: Sendable {
    private struct State {
        /// Folders seen as mount points while watched: the folder → the devices seen there.
        var mounted: [LocalPath: Set<UInt64>] = [:]
        /// Folders found with their card unmounted: the folder → the device its files were on.
        var unmounted: [LocalPath: UInt64] = [:]
    }

    private let state = Locked(State())
    private let fstab: String

    init(fstab: String = "/etc/fstab") { self.fstab = fstab }

    /// The folder is watched: what is mounted on it now is remembered. Returns the device
    /// when it was not known to be mounted there before, for the queue database to keep
    /// (`remember` gives it back after a restart).
    func note(_ folder: LocalPath) -> UInt64? {
        guard let here = try? FileIO.status(folder), Self.mountsSomething(folder, here) else { return nil }
        let device = UInt64(here.st_dev)
        return state.withLock { $0.mounted[folder, default: []].insert(device).inserted } ? device : nil
    }

    /// Mount points noted before (by an earlier run of the agent).
    func remember(_ mountPoints: [(folder: LocalPath, device: UInt64)]) {
        state.withLock { state in
            for (folder, device) in mountPoints { state.mounted[folder, default: []].insert(device) }
        }
    }

    /// How `folder` is away now; nil when its files can be read from it.
    func absence(of folder: LocalPath) -> FolderAbsence? {
        let here: stat
        do throws(SystemError) { here = try FileIO.status(folder) } catch {
            return [ENOENT, ENOTDIR].contains(error.errno) ? .missing : nil
        }
        guard let device = state.withLock({ $0.unmounted[folder] }) else { return nil }
        guard UInt64(here.st_dev) != device, !Self.mountsSomething(folder, here), Self.isEmpty(folder) else {
            state.withLock { if $0.unmounted[folder] == device { $0.unmounted[folder] = nil } }
            return nil
        }
        return .unmounted
    }

    /// A file of the rule on `folder` was not found at `file`, where it was on the file
    /// system `device`: how its folder is away, learning an unmounted card; nil when the
    /// folder is there and the file is gone from it.
    func fileMissing(_ file: LocalPath, device: UInt64?, folder: LocalPath) -> FolderAbsence? {
        if let away = absence(of: folder) { return away }
        guard let device, Self.nearestThere(file, within: folder) == folder,
              let here = try? FileIO.status(folder), UInt64(here.st_dev) != device,
              !Self.mountsSomething(folder, here), Self.isEmpty(folder),
              state.withLock({ $0.mounted[folder]?.contains(device) == true }) || isFixedMountPoint(folder) else { return nil }
        state.withLock { $0.unmounted[folder] = device }
        return .unmounted
    }

    /// Whether `/etc/fstab` mounts something on `folder` (its second field, with the
    /// octal escapes fstab uses for spaces and tabs).
    private func isFixedMountPoint(_ folder: LocalPath) -> Bool {
        guard let text = try? FileIO.readBytes(fstab) else { return false }
        for line in text.split(separator: UInt8(ascii: "\n")) where line.first != UInt8(ascii: "#") {
            let fields = line.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
            if fields.count >= 2, Self.unescaped(Array(fields[1])) == folder.bytes { return true }
        }
        return false
    }

    /// `\040` and the like, as fstab writes bytes that would split its fields.
    private static func unescaped(_ field: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < field.count {
            if field[i] == UInt8(ascii: "\\"), i + 3 < field.count,
               let value = UInt8(String(decoding: field[(i + 1)...(i + 3)], as: UTF8.self), radix: 8) {
                out.append(value)
                i += 4
            } else {
                out.append(field[i])
                i += 1
            }
        }
        return out
    }

    /// The nearest folder on the way from `folder` down to `file` that is there; nil when
    /// `file` is not below `folder`.
    private static func nearestThere(_ file: LocalPath, within folder: LocalPath) -> LocalPath? {
        let prefix = folder.bytes.last == UInt8(ascii: "/") ? folder.bytes : folder.bytes + [UInt8(ascii: "/")]
        guard file.bytes.starts(with: prefix) else { return nil }
        var dir = file.parent
        while dir.bytes.count > folder.bytes.count, (try? FileIO.status(dir)) == nil { dir = dir.parent }
        return dir
    }

    /// Whether a file system is mounted on `folder` (its device is not its parent's).
    private static func mountsSomething(_ folder: LocalPath, _ here: stat) -> Bool {
        guard let parent = try? FileIO.status(folder.parent) else { return false }
        return parent.st_dev != here.st_dev
    }

    private static func isEmpty(_ folder: LocalPath) -> Bool {
        do throws(SystemError) { return try OpenFolder(folder).next() == nil } catch { return false }
    }
}
