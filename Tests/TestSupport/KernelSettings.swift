import Foundation
import Glibc

/// Root-only changes to the machine that a test makes and undoes: sysctls and mounts.
/// A test that needs them fails with a message saying so when not run as root.
public enum Root {
    public static func require(_ why: String) throws {
        guard geteuid() == 0 else { throw TestFailure("this test needs root (\(why)); CI runs `make test` as root") }
    }
}

/// A value written to a file under /proc/sys, put back by `restore()` (call it in a
/// `defer`). The old value is also put back when the object goes away.
public final class SysctlOverride: @unchecked Sendable {
    // Sendable by construction: used from the one test that made it.
    public let path: String
    public let original: String
    private var restored = false

    /// Writes `value` to `/proc/sys/<name with dots as slashes>`, e.g. `fs.inotify.max_user_watches`.
    public init(_ name: String, _ value: String) throws {
        try Root.require("it changes the sysctl \(name)")
        path = "/proc/sys/" + name.replacingOccurrences(of: ".", with: "/")
        original = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        try Self.write(value, to: path)
    }

    deinit { restore() }

    public func restore() {
        guard !restored else { return }
        restored = true
        try? Self.write(original, to: path)
    }

    static func write(_ value: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array((value + "\n").utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else { throw TestFailure("cannot write \(value) to \(path): \(String(cString: strerror(errno)))") }
    }
}

/// tmpfs mounts for tests of cards coming and going.
public enum TestMounts {
    public static func mountTmpfs(at path: String) throws {
        try Root.require("it mounts a tmpfs")
        try Shell.run("/bin/mount", ["-t", "tmpfs", "-o", "size=16m", "iu-test", path])
    }

    /// Mounts the folder `source` on `path` too (`mount --bind`): its files keep the device
    /// of `source`'s file system.
    public static func bind(_ source: String, at path: String) throws {
        try Root.require("it bind-mounts a folder")
        try Shell.run("/bin/mount", ["--bind", source, path])
    }

    public static func unmount(_ path: String) throws {
        try Shell.run("/bin/umount", [path])
    }

    /// Unmounts everything mounted at or below `path` (cleanup after a failed test).
    public static func unmountAll(below path: String) {
        while let text = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8),
              let line = text.split(separator: "\n").last(where: { $0.split(separator: " ").dropFirst().first?.hasPrefix(path) == true }),
              let point = line.split(separator: " ").dropFirst().first {
            guard (try? Shell.run("/bin/umount", ["-l", String(point)])) != nil else { return }
        }
    }
}
