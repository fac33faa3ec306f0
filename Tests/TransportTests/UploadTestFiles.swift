import Foundation
import Glibc
import TestSupport

/// Local files for upload tests, written in pieces so a large one never sits in memory whole.
enum UploadTestFiles {
    /// A file of `size` deterministic bytes; returns its path.
    static func make(_ folder: TemporaryFolder, _ name: String, size: Int, seed: UInt64) throws -> String {
        let path = folder.path + "/" + name
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw TestFailure("cannot write \(path)")
        }
        defer { try? handle.close() }
        var written = 0, piece: UInt64 = 0
        while written < size {
            let n = min(8 << 20, size - written)
            try handle.write(contentsOf: TestData.bytes(count: n, seed: seed &+ piece))
            written += n
            piece += 1
        }
        return path
    }

    static func open(_ path: String) throws -> Int32 {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("open \(path): \(String(cString: strerror(errno)))") }
        return fd
    }

    static func mtime(_ path: String) throws -> Int64 {
        var st = stat()
        guard stat(path, &st) == 0 else { throw TestFailure("stat \(path): \(String(cString: strerror(errno)))") }
        return Int64(st.st_mtim.tv_sec)
    }

    static func size(_ path: String) -> Int64? {
        var st = stat()
        return stat(path, &st) == 0 ? Int64(st.st_size) : nil
    }
}
