import Foundation
import Glibc
import Platform

/// A TCP proxy on loopback in front of a server (Tests/TestSupport/holding-proxy.py) that
/// holds a connection's client bytes until `release()`: from `holdAfter` bytes into it (an
/// upload part way), or from the first request of a method (`holdAt: "PUT"`: the server has
/// seen nothing of it). A test acts meanwhile, whatever the server is.
public final class HoldingProxy: @unchecked Sendable {
    // Sendable by construction: used from one test's thread; `port` is set once, in init.
    public private(set) var port = 0
    private let process: ChildProcess
    private var output = Data()

    public static let script = Repository.root + "/Tests/TestSupport/holding-proxy.py"

    public enum Hold: Sendable {
        case afterBytes(Int)
        case atMethod(String)
    }

    public init(toPort target: Int, hold: Hold) throws {
        let python = "/usr/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestFailure("the holding proxy needs \(python): run `make test` to install it")
        }
        let how = switch hold {
        case .afterBytes(let n): ["--hold-after", String(n)]
        case .atMethod(let verb): ["--hold-at", verb]
        }
        process = try ChildProcess(python, [Self.script, "--target-port", String(target)] + how, output: .pipe)
        guard let line = try? waitForLine(prefix: "READY ", timeout: 20), let port = Int(line.dropFirst("READY ".count)) else {
            process.stop()
            throw TestFailure("the holding proxy did not start (output: \(String(decoding: output, as: UTF8.self)))")
        }
        self.port = port
    }

    deinit { process.stop() }

    /// Waits until a connection is held.
    public func waitUntilHolding(timeout: Double = 60) throws {
        _ = try waitForLine(prefix: "HELD", timeout: timeout)
    }

    /// Lets everything through from now on.
    public func release() { process.send(SIGUSR1) }

    /// The bytes clients have sent through the proxy so far (requests and bodies).
    public func bytesSent() throws -> Int {
        process.send(SIGHUP)
        let line = try waitForLine(prefix: "SENT ", timeout: 10)
        guard let n = Int(line.dropFirst("SENT ".count)) else { throw TestFailure("the proxy said `\(line)`") }
        return n
    }

    /// The next line of the proxy's output starting with `prefix` (earlier lines are dropped).
    private func waitForLine(prefix: String, timeout: Double) throws -> String {
        let handle = process.standardOutput!
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let text = String(decoding: output, as: UTF8.self)
            if let end = text.firstIndex(of: "\n") {
                let line = String(text[..<end])
                output = Data(text[text.index(after: end)...].utf8)
                if line.hasPrefix(prefix) { return line }
                continue
            }
            guard Date() < deadline else { break }
            var fds = [pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 1, 200) > 0 {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                output.append(chunk)
            }
        }
        throw TestFailure("the holding proxy never said \(prefix.trimmingCharacters(in: .whitespaces)) within \(Int(timeout)) s")
    }
}
