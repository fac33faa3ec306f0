import Foundation
import Glibc
import Platform
import Testing

/// A long text written while the queue's snapshot is held goes out as fast as its reader
/// takes it, and waits in memory, in order, for what the reader does not take yet.
@Suite("Output written as the reader takes it")
struct EagerOutputTests {
    /// 1 MiB of numbered lines, in pieces of 64 KiB.
    static let pieces: [String] = {
        let lines = (0..<80_000).map { String(format: "line %07d\n", $0) }
        let text = lines.joined()
        var pieces: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            pieces.append(String(rest.prefix(65_536)))
            rest = rest.dropFirst(65_536)
        }
        return pieces
    }()

    @Test("a pipe nobody reads yet: it takes what it holds, the rest waits, and all of it arrives in order once read")
    func readerNotReading() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let output = EagerOutput(fd: ends[1])
        for piece in Self.pieces { output.write(piece) }
        let total = Self.pieces.reduce(0) { $0 + $1.utf8.count }
        let getPipeSize: Int32 = 1032  // F_GETPIPE_SZ, which Glibc's module leaves out (a GNU extension)
        let capacity = Int(fcntl(ends[1], getPipeSize))
        #expect(output.heldCount == total - capacity, "the pipe took \(total - output.heldCount) bytes, its capacity is \(capacity)")
        // Read at last, by another thread, while what waited is written.
        let reader = Reader(fd: ends[0])
        output.finish()
        close(ends[1])
        #expect(output.heldCount == 0)
        #expect(reader.wait() == Array(Self.pieces.joined().utf8))
    }

    @Test("a regular file takes everything at once: nothing waits")
    func regularFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("eager-\(getpid()).txt").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        defer { unlink(path) }
        let output = EagerOutput(fd: fd)
        for piece in Self.pieces {
            output.write(piece)
            #expect(output.heldCount == 0)
        }
        output.finish()
        close(fd)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == Self.pieces.joined())
    }

    @Test("a reader gone: nothing more is written or kept, and no SIGPIPE ends the process")
    func readerGone() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        let output = EagerOutput(fd: ends[1])
        for piece in Self.pieces { output.write(piece) }
        #expect(output.heldCount == 0)
        output.finish()
    }

    /// Reads a descriptor to its end on a thread of its own.
    final class Reader: @unchecked Sendable {
        private var bytes: [UInt8] = []
        private let done = DispatchSemaphore(value: 0)

        init(fd: Int32) {
            Thread.detachNewThread { [self] in
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n < 0, errno == EINTR { continue }
                    if n <= 0 { break }
                    bytes += buffer[..<n]
                }
                done.signal()
            }
        }

        func wait() -> [UInt8] {
            done.wait()
            return bytes
        }
    }
}
