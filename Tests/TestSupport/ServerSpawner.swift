import Foundation
import Glibc
import Platform

/// Starts reference servers for this test process by asking one Python process that has
/// already imported the server's modules to fork them (reference-server/spawner.py): a
/// server then costs about 60 ms of CPU to start instead of half a second, and the suite
/// starts a few hundred. The servers are the same program, stopped with the same signals.
final class ServerSpawner: @unchecked Sendable {
    // Sendable by construction: every field is set in init and never changed.
    private let folder: TemporaryFolder
    private let process: ChildProcess
    private var socketPath: String { folder.path + "/spawner" }

    private static let shared = Locked<ServerSpawner?>(nil)

    /// The process's spawner, started on first use.
    static func running(python: String) throws -> ServerSpawner {
        try shared.withLock { spawner in
            if let spawner, spawner.process.isRunning { return spawner }
            let started = try ServerSpawner(python: python)
            spawner = started
            return started
        }
    }

    private init(python: String) throws {
        folder = TemporaryFolder("iu-spawner")
        let log = ProcessInfo.processInfo.environment["IU_SERVER_LOG"] != nil
        process = try ChildProcess(python, [Repository.root + "/reference-server/spawner.py", folder.path + "/spawner"],
                                   output: .pipe, error: log ? .inherit : .null)
        let ready = process.standardOutput!.availableData
        guard String(decoding: ready, as: UTF8.self).hasPrefix("READY") else {
            process.stop()
            throw TestFailure("the reference server's spawner did not start (output: \(String(decoding: ready, as: UTF8.self)))")
        }
        // Keep draining its output so it never blocks on a full pipe.
        let output = process.standardOutput!
        Thread { while !output.availableData.isEmpty {} }.start()
    }

    /// A new server with server.py's `arguments`, once it printed its first line (`READY ...`).
    func start(_ arguments: [String]) throws -> (server: SpawnedServer, firstLine: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketPath.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw TestFailure("the reference server's spawner does not answer at \(socketPath): \(String(cString: strerror(errno)))")
        }
        let request = try JSONSerialization.data(withJSONObject: ["argv": arguments]) + Data("\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            close(fd)
            throw TestFailure("could not ask the spawner for a server")
        }
        let lines = LineReader(fd: fd)
        guard let pidLine = lines.next(timeout: 30), pidLine.hasPrefix("PID "), let pid = pid_t(pidLine.dropFirst(4)) else {
            close(fd)
            throw TestFailure("the spawner did not start a server")
        }
        let server = SpawnedServer(processIdentifier: pid, lines: lines)
        guard let first = lines.next(timeout: 30) else {
            server.drain()
            server.stop()
            throw TestFailure("the reference server did not become ready within 30 s")
        }
        server.drain()
        return (server, first)
    }
}

/// Lines from a socket, with a deadline for each.
final class LineReader: @unchecked Sendable {
    // Used by one thread at a time: the starting test, then the drain.
    let fd: Int32
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 4096)

    init(fd: Int32) { self.fd = fd }

    /// The next line without its newline; nil at the end or after `timeout` seconds.
    func next(timeout: Double) -> String? {
        let deadline = MonotonicClock.seconds() + timeout
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeSubrange(...end)
                return line
            }
            let left = deadline - MonotonicClock.seconds()
            guard left > 0 else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(left, 1) * 1000)) >= 0 || errno == EINTR else { return nil }
            guard poller.revents != 0 else { continue }
            guard read() > 0 else { return nil }
        }
    }

    /// Reads what is there into the buffer: the count, 0 at the end.
    func read() -> Int {
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n > 0 { buffer.append(contentsOf: chunk[..<n]) }
            return max(n, 0)
        }
    }
}

/// A server the spawner forked: signalled by its PID, and over when its connection ends.
final class SpawnedServer: @unchecked Sendable {
    let processIdentifier: pid_t
    private let lines: LineReader
    private let ended = DispatchSemaphore(value: 0)
    private let over = Locked(false)

    init(processIdentifier: pid_t, lines: LineReader) {
        self.processIdentifier = processIdentifier
        self.lines = lines
    }

    /// Reads the rest of its output until it exits.
    func drain() {
        // A thread of its own: a read that blocks must not hold one of Dispatch's few.
        Thread { [self] in
            while lines.read() > 0 {}
            close(lines.fd)
            over.withLock { $0 = true }
            ended.signal()
        }.start()
    }

    var isRunning: Bool { !over.withLock { $0 } }

    func wait(seconds: Double) -> Bool {
        guard isRunning else { return true }
        guard ended.wait(timeout: .now() + seconds) == .success else { return false }
        ended.signal()
        return true
    }

    func waitUntilExit() {
        guard isRunning else { return }
        ended.wait()
        ended.signal()
    }

    func stop(grace: Double = 10) {
        guard isRunning else { return }
        kill(processIdentifier, SIGCONT)
        kill(processIdentifier, SIGTERM)
        if !wait(seconds: grace) { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
    }
}
