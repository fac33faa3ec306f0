import Foundation
import Glibc
import TestSupport

/// A FAT file system, as on a USB stick or a camera card: no hard links (`link()` is
/// `EPERM`). Made with mkfs.vfat in an image file and mounted by the kernel's vfat driver
/// where it has one (`mount -o loop`), else by fusefat, FAT in user space through FUSE
/// (whose library offers no `RENAME_NOREPLACE` either). Root only, as CI runs.
final class VFATDisk {
    let path: String
    let image: String
    /// Mounted by fusefat rather than by the kernel.
    let throughFUSE: Bool

    init(at path: String, megabytes: Int = 32) throws {
        guard getuid() == 0 else { throw TestFailure("a FAT file system is mounted with mount or fusefat, which need root here (CI runs as root)") }
        self.path = path
        image = path + ".img"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: image, contents: nil), truncate(image, off_t(megabytes) << 20) == 0 else {
            throw TestFailure("cannot make the image \(image)")
        }
        try Shell.run("/usr/sbin/mkfs.vfat", [image])
        let filesystems = (try? String(contentsOfFile: "/proc/filesystems", encoding: .utf8)) ?? ""
        throughFUSE = !filesystems.split(separator: "\n").contains { $0.hasSuffix("\tvfat") }
        if throughFUSE {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/fusefat") else {
                throw TestFailure("this kernel has no vfat and fusefat is missing: `make deps` installs it")
            }
            // fusefat stays in the background holding whatever output it was given.
            try Shell.run("/bin/sh", ["-c", "exec /usr/bin/fusefat -o rw+ \"$0\" \"$1\" >/dev/null 2>&1", image, path])
        } else {
            try Shell.run("/usr/bin/mount", ["-t", "vfat", "-o", "loop", image, path])
        }
    }

    func unmount() {
        _ = try? Shell.run("/usr/bin/umount", ["-l", path])
    }
}
