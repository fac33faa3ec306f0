import Foundation
import Glibc
import Platform
import Synchronization
import Testing

@Suite("The one read and write loop")
struct FileIOTests {
    /// What the reading thread got, handed back to the test.
    final class Outcome: @unchecked Sendable {
        // Sendable by construction: written by the reader before `done` is signalled, read after.
        var thread = pthread_t()
        var count = -1
        var bytes: [UInt8] = []
        var error: SystemError?
        let started = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
    }

    @Test("a read interrupted by signals and fed in pieces still fills the whole buffer")
    func interruptedAndShortReads() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        // A handler without SA_RESTART: a blocked read returns EINTR, as under real signals.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        try #require(sigaction(SIGUSR2, &action, nil) == 0)

        let outcome = Outcome()
        let reader = fds[0]
        let thread = Thread {
            // The test runner's threads may block signals; this one must take them.
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGUSR2)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            outcome.thread = pthread_self()
            outcome.started.signal()
            var buffer = [UInt8](repeating: 0, count: 10)
            do {
                outcome.count = try buffer.withUnsafeMutableBytes { b in
                    Result { () throws(SystemError) in try FileIO.read(reader, into: b) }
                }.get()
                outcome.bytes = buffer
            } catch { outcome.error = error as? SystemError ?? SystemError("read", errno: EIO) }
            outcome.done.signal()
        }
        thread.start()
        outcome.started.wait()
        usleep(50_000)
        for _ in 0..<3 { pthread_kill(outcome.thread, SIGUSR2); usleep(20_000) }
        _ = [UInt8]("0123".utf8).withUnsafeBytes { write(fds[1], $0.baseAddress, 4) }
        usleep(50_000)
        for _ in 0..<3 { pthread_kill(outcome.thread, SIGUSR2); usleep(20_000) }
        _ = [UInt8]("456789".utf8).withUnsafeBytes { write(fds[1], $0.baseAddress, 6) }
        #expect(outcome.done.wait(timeout: .now() + 5) == .success)
        #expect(outcome.error == nil, "the loop gave up: \(outcome.error.map(String.init(describing:)) ?? "")")
        #expect(outcome.count == 10)
        #expect(outcome.bytes == Array("0123456789".utf8))
    }

    @Test("a large write into a slow pipe, interrupted by signals and taken in pieces, still delivers every byte in order")
    func interruptedAndShortWrites() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        defer { close(fds[0]) }
        // A handler without SA_RESTART: a blocked write returns EINTR when nothing moved yet,
        // and a short count when part of it did.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        try #require(sigaction(SIGUSR2, &action, nil) == 0)

        let content = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        let outcome = Outcome()
        let finished = Atomic<Bool>(false)
        let mayExit = DispatchSemaphore(value: 0)
        let writer = fds[1]
        let thread = Thread {
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGUSR2)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            outcome.thread = pthread_self()
            outcome.started.signal()
            do {
                try content.withUnsafeBytes { b in try Result { () throws(SystemError) in try FileIO.write(writer, b) }.get() }
            } catch { outcome.error = error as? SystemError ?? SystemError("write", errno: EIO) }
            finished.store(true, ordering: .sequentiallyConsistent)
            // The reader sees the end of the pipe whatever happened, so it never waits forever.
            close(writer)
            outcome.done.signal()
            // Alive until the reader stops signalling it: a signal to a thread gone is undefined.
            mayExit.wait()
        }
        thread.start()
        outcome.started.wait()
        defer { mayExit.signal() }

        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        var signals = 0
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            // While the pipe is full and the writer blocked, signals interrupt its write: first
            // after some bytes moved (a short count), then with none (EINTR).
            for _ in 0..<2 where !finished.load(ordering: .sequentiallyConsistent) {
                usleep(2_000)
                pthread_kill(outcome.thread, SIGUSR2)
                signals += 1
            }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fds[0], $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            try #require(n >= 0, "read failed: \(String(cString: strerror(errno)))")
            if n == 0 { break }
            received += buffer[..<n]
        }
        #expect(outcome.done.wait(timeout: .now() + 5) == .success)
        #expect(outcome.error == nil, "the loop gave up: \(outcome.error.map(String.init(describing:)) ?? "")")
        #expect(received.count == content.count, "\(received.count) of \(content.count) bytes arrived after \(signals) signals")
        // Compared outside #expect: a failed comparison of two long arrays would be diffed element by element.
        let same = received == content
        #expect(same, "the bytes arrived in another order or changed")
    }

    @Test("a read stops short only at the end of the file, and readBlocks says the file ended early")
    func endOfFile() throws {
        let path = "/tmp/iu-fileio-\(getpid())"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd); unlink(path) }
        let content = [UInt8](0..<200)
        try content.withUnsafeBytes { b in try Result { () throws(SystemError) in try FileIO.write(fd, b, at: 0) }.get() }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = try buffer.withUnsafeMutableBytes { b in try Result { () throws(SystemError) in try FileIO.read(fd, into: b, at: 180) }.get() }
        #expect(n == 20 && Array(buffer[..<20]) == Array(content[180...]))

        var seen: [UInt8] = []
        try FileIO.readBlocks(fd, from: 10, length: 150, blockSize: 64) { seen += $0 }
        #expect(seen == Array(content[10..<160]))
        #expect(throws: SystemError(("read"), errno: ENODATA, path: nil)) {
            try FileIO.readBlocks(fd, from: 100, length: 150, blockSize: 64) { _ in }
        }
    }
}
