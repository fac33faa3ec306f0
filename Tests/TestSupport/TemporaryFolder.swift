import Foundation
import Platform
import Glibc

/// A fresh folder under /tmp, removed when the value is released.
public final class TemporaryFolder: @unchecked Sendable {
    // Sendable by construction: `path` is immutable after init.
    public let path: String

    public init(_ prefix: String = "iu-test") {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(result != nil, "mkdtemp failed: \(String(cString: strerror(errno)))")
        path = String(cString: result!)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `bytes` to `name` inside the folder and returns its path.
    ///
    /// Through a descriptor closed on exec, and returned once no process holds the file open
    /// for writing: a test that writes a stand-in program and runs it would otherwise meet
    /// "Text file busy" whenever another test started a process while the file was open (the
    /// child keeps a copy of the descriptor from its fork until its exec, which on a loaded
    /// machine can be a while).
    @discardableResult
    public func file(_ name: String, bytes: [UInt8]) throws -> String {
        let full = path + "/" + name
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TestFailure("cannot write \(full): \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                close(fd)
                throw TestFailure("cannot write \(full): \(String(cString: strerror(errno)))")
            }
            written += n
        }
        close(fd)
        Self.waitUntilNobodyWrites(full)
        return full
    }

    /// Waits (up to 10 s) until the kernel says nobody has `path` open for writing; returns
    /// at once where it cannot say.
    private static func waitUntilNobodyWrites(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        for _ in 0..<1000 {
            guard FileIO.writers(of: fd) == .some else { return }
            usleep(10_000)
        }
    }

    /// A file of `size` pseudo-random bytes (deterministic for a seed).
    @discardableResult
    public func randomFile(_ name: String, size: Int, seed: UInt64 = 42) throws -> String {
        try file(name, bytes: TestData.bytes(count: size, seed: seed))
    }
}

public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public enum TestData {
    /// Deterministic pseudo-random bytes (xorshift), cheap for large sizes.
    public static func bytes(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &+ 0x9E3779B97F4A7C15
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { raw in
            let words = count / 8
            let p = raw.baseAddress!
            for i in 0..<words {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                p.storeBytes(of: state, toByteOffset: i * 8, as: UInt64.self)
            }
            for i in (words * 8)..<count {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                raw[i] = UInt8(truncatingIfNeeded: state)
            }
        }
        return out
    }

    /// `count` empty files named `prefix` and a number from `first` up, `.jpg`, in `folder`
    /// (made with its parents): a server folder years of photos have filled.
    public static func emptyFiles(_ count: Int, in folder: String, prefix: String, first: Int) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for i in 0..<count {
            let fd = open(folder + "/\(prefix)\(first + i).jpg", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw TestFailure("cannot make a file in \(folder): \(String(cString: strerror(errno)))") }
            close(fd)
        }
    }

    /// SHA-256 of a file, as hex, via OpenSSL's command (which uses the CPU's SHA
    /// instructions; coreutils' sha256sum does not, and took half a minute of the suite's CPU).
    public static func sha256(ofFile path: String) throws -> String {
        let output = try Shell.run("/usr/bin/openssl", ["dgst", "-sha256", "-r", path])
        return String(output.split(separator: " ").first ?? "")
    }
}

/// The repository's root folder, found from this file's location.
public enum Repository {
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// Where the executables the tests run are: the folder `INSTANT_UPLOAD_TEST_PROGRAMS`
    /// names (`make test` points it at the release build it has already made for the
    /// package, so the tests start the program that ships), else where `swift build`
    /// put them beside the test bundle.
    public static var binaries: String {
        if let folder = ProcessInfo.processInfo.environment["INSTANT_UPLOAD_TEST_PROGRAMS"], !folder.isEmpty { return folder }
        // The test bundle runs from the build folder: its executables sit beside it.
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        while dir.path != "/" {
            if FileManager.default.fileExists(atPath: dir.path + "/instant-upload") { return dir.path }
            dir.deleteLastPathComponent()
        }
        return root + "/.build/debug"
    }
}
