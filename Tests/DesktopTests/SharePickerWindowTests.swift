import Foundation
import Platform
import Glibc
import Testing
import TestSupport

/// `share-to` without `--to` on a display: the zenity picker in a real X server (Xvfb),
/// driven with xdotool as a person would, against the reference server.
@Suite("share-to's folder picker in a window", .serialized)
struct SharePickerWindowTests {
    /// share-to running in the background, so the test can act on its windows.
    final class Running: @unchecked Sendable {
        // Sendable by construction: set in init, read after `wait()`.
        let process: ChildProcess
        let out = TemporaryFolder("iu-share-out")

        init(_ arguments: [String], environment: [String: String]) throws {
            process = try ChildProcess(Repository.binaries + "/share-to", arguments, environment: environment,
                                       output: .file(out.path + "/stdout"), error: .file(out.path + "/stderr"))
        }

        /// Waits for share-to to exit and returns its status, stdout and stderr.
        struct Outcome {
            var status: Int32
            var stdout: String
            var stderr: String
        }

        func wait(timeout: Double = 30) throws -> Outcome {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning, Date() < deadline { usleep(50_000) }
            if process.isRunning {
                process.send(SIGKILL)
                process.waitUntilExit()
                throw TestFailure("share-to did not exit within \(timeout) s: \(read("stderr"))")
            }
            return Outcome(status: process.terminationStatus, stdout: read("stdout"), stderr: read("stderr"))
        }

        func read(_ name: String) -> String { (try? String(contentsOfFile: out.path + "/" + name, encoding: .utf8)) ?? "" }

        deinit {
            process.send(SIGKILL)
            process.waitUntilExit()
        }
    }

    /// What a file manager passes for `%U`: a file URI, every byte outside the unreserved set escaped.
    static func uri(_ path: String) -> String {
        "file://" + path.utf8.map { byte -> String in
            let c = Character(Unicode.Scalar(byte))
            return (c.isLetter && byte < 0x80) || (c.isNumber && byte < 0x80) || "/-._~".contains(c) ? String(c) : String(format: "%%%02X", byte)
        }.joined()
    }

    @Test("two files without --to: browse into a folder, create one inside it, confirm; both arrive there and a notification says so")
    func browseCreateAndSend() throws {
        let server = try ReferenceServer()
        try server.makeFolder("Existing/Inner")
        let session = try AgentHarness()
        try session.addAccount(server)
        try session.startAgent()
        let display = try VirtualDisplay()
        let bus = try PrivateSessionBus()
        let recorder = try bus.startRecorder()
        let first = try session.home.file("desk/first photo.jpg", bytes: Array("first".utf8))
        let second = try session.home.file("desk/second.txt", bytes: Array("second".utf8))

        var environment = session.environment.merging(display.environment) { _, b in b }.merging(bus.environment) { _, b in b }
        environment["XDG_CURRENT_DESKTOP"] = "XFCE"
        let shareTo = try Running([Self.uri(first), second], environment: environment)
        let shots = Repository.artifacts + "/share-to-picker"

        do { _ = try display.waitForWindow(named: "Send 2 files to home: /$") } catch {
            let ps = (try? Shell.run("/bin/ps", ["-eo", "pid,ppid,stat,args"])) ?? ""
            throw TestFailure("\(error); share-to said: \(shareTo.read("stderr")); processes: \(ps.split(separator: "\n").filter { $0.contains("share-to") || $0.contains("zenity") || $0.contains("secret") })")
        }
        try display.screenshot(to: shots + "-1-top.png")
        try display.type("Existing", thenPress: "Return")
        _ = try display.waitForWindow(named: "Send 2 files to home: /Existing$")
        try display.screenshot(to: shots + "-2-existing.png")
        try display.type("New folder", thenPress: "Return")
        _ = try display.waitForWindow(named: "New folder in /Existing")
        try display.type("Fresh", thenPress: "Return")
        _ = try display.waitForWindow(named: "Send 2 files to home: /Existing/Fresh$")
        try display.screenshot(to: shots + "-3-fresh.png")
        try display.type("Send here", thenPress: "Return")

        let result = try shareTo.wait()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("queued 2 files for home:/Existing/Fresh"), "\(result.stdout)")
        try session.waitForAll("completed", count: 2)
        let fresh = server.tree() + "/Existing/Fresh"
        #expect(try String(contentsOfFile: fresh + "/first photo.jpg", encoding: .utf8) == "first")
        #expect(try String(contentsOfFile: fresh + "/second.txt", encoding: .utf8) == "second")
        let summaries = try recorder.calls().compactMap(\.summary)
        #expect(summaries.contains("2 files queued to /Existing/Fresh on home"), "\(summaries)")
    }

    @Test("cancelling the picker queues nothing and exits 1 without a word")
    func cancel() throws {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.addAccount(server)
        let display = try VirtualDisplay()
        let file = try session.home.file("desk/a.jpg", bytes: [1])
        let shareTo = try Running([file], environment: session.environment.merging(display.environment) { _, b in b })
        _ = try display.waitForWindow(named: "Send a.jpg to home: /")
        try display.xdotool(["key", "Escape"])
        let result = try shareTo.wait()
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty, "\(result.stdout)")
        #expect(!result.stderr.contains("queued"), "\(result.stderr)")
        #expect(try session.items().isEmpty)
    }
}
