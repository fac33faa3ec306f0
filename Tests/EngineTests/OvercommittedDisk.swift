import Foundation
import Glibc
import TestSupport

/// A file system that has room the disk under it does not: ext2 on a loop device whose
/// backing file lives on a much smaller tmpfs. Writes land in the page cache and succeed;
/// the disk refuses them only as they are written back, so it is `fsync` that fails
/// (`ENOSPC`, `EIO`), as on a dying USB stick or a full thin-provisioned volume. Root only,
/// as CI runs.
final class OvercommittedDisk {
    let path: String
    private let backing: String

    /// Mounts it at `path`: it claims `claimedMegabytes`, and holds `heldMegabytes`.
    init(at path: String, claimedMegabytes: Int = 64, heldMegabytes: Int = 4) throws {
        guard getuid() == 0 else { throw TestFailure("a disk that fails fsync is made with a loop mount, which needs root (CI runs as root)") }
        self.path = path
        backing = path + " backing"
        for folder in [path, backing] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        try Shell.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(heldMegabytes)m", "tmpfs", backing])
        let image = backing + "/disk.img"
        guard FileManager.default.createFile(atPath: image, contents: nil), truncate(image, off_t(claimedMegabytes) << 20) == 0 else {
            throw TestFailure("cannot make the sparse image \(image)")
        }
        try Shell.run("/usr/sbin/mkfs.ext2", ["-q", "-F", image])
        try Shell.run("/usr/bin/mount", ["-o", "loop", image, path])
    }

    func unmount() {
        _ = try? Shell.run("/usr/bin/umount", ["-l", path])
        _ = try? Shell.run("/usr/bin/umount", ["-l", backing])
    }
}
