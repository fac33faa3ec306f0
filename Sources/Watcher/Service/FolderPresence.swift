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
/// an ordinary empty folder, and a photo queued from the card looks deleted. What tells
/// them apart is the file system: a queued file records the device it was on, and when
/// it is not found, its folder is there but on another device, mounts nothing, and holds
/// nothing, the card is out. The folder is then remembered as away until that device is
/// mounted on it again (or another one is: a different card, whose files are its own).
///
/// Shared by the scheduler's threads (the rule gates, the transfers' outcomes).
final class FolderPresence: Sendable {
    /// Folders found with their card unmounted: the folder → the device its files were on.
    private let unmounted = Locked<[LocalPath: UInt64]>([:])

    /// How `folder` is away now; nil when its files can be read from it.
    func absence(of folder: LocalPath) -> FolderAbsence? {
        let here: stat
        do throws(SystemError) { here = try FileIO.status(folder) } catch {
            return [ENOENT, ENOTDIR].contains(error.errno) ? .missing : nil
        }
        guard let device = unmounted.withLock({ $0[folder] }) else { return nil }
        guard UInt64(here.st_dev) != device, !Self.mountsSomething(folder, here) else {
            unmounted.withLock { if $0[folder] == device { $0[folder] = nil } }
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
              !Self.mountsSomething(folder, here), Self.isEmpty(folder) else { return nil }
        unmounted.withLock { $0[folder] = device }
        return .unmounted
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
