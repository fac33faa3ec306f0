import Foundation
import Platform
import Glibc

/// An X server of the test's own (Xvfb), with xdotool to act as the person and ImageMagick's
/// `import` to take screenshots. Fails with what to install when a tool is missing.
public final class VirtualDisplay: @unchecked Sendable {
    // Sendable by construction: every property is set once in init.
    public let display: String
    private let server: ChildProcess

    public init() throws {
        for tool in ["/usr/bin/Xvfb", "/usr/bin/xdotool", "/usr/bin/import"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw TestFailure("\(tool) is missing: `make test` installs xvfb, xdotool and imagemagick")
        }
        // Xvfb picks a free display number itself and writes it to the pipe given by -displayfd.
        // A child gets only 0-2, so the shell points fd 3 at the pipe. Without -noreset the
        // server resets when its last client leaves, and refuses the next dialog meanwhile.
        server = try ChildProcess("/bin/sh", ["-c", "exec /usr/bin/Xvfb -displayfd 3 -noreset -screen 0 1024x768x24 -nolisten tcp 3>&1 1>/dev/null"],
                                  output: .pipe)
        let pipe = server.standardOutput!
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !text.contains("\n") {
            let chunk = pipe.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            server.terminate()
            throw TestFailure("Xvfb did not say which display it took (\(text))")
        }
        display = ":\(number)"
    }

    deinit {
        server.send(SIGKILL)
        server.waitUntilExit()
    }

    /// `DISPLAY` for programs that should show their windows here.
    public var environment: [String: String] { ["DISPLAY": display] }

    /// This process's environment pointed at this display, for xdotool and ImageMagick.
    private var toolEnvironment: [String: String] { ProcessInfo.processInfo.environment.merging(environment) { _, b in b } }

    /// Runs xdotool with these arguments and returns what it printed.
    @discardableResult
    public func xdotool(_ arguments: [String]) throws -> String {
        try Shell.run("/usr/bin/xdotool", arguments, environment: toolEnvironment)
    }

    /// The ids of the mapped windows whose title matches `title`. (A toolkit names its window
    /// before it maps it, and keys sent to an unmapped window are lost.)
    public func windows(named title: String) -> [String] {
        let r = try? Shell.capture("/usr/bin/xdotool", ["search", "--onlyvisible", "--name", title],
                                   environment: toolEnvironment)
        return (r?.stdout ?? "").split(separator: "\n").map(String.init)
    }

    /// Waits for a window whose title matches the regular expression `title`, and gives it the
    /// keyboard. (Window ids are no way to tell a new dialog from the one it replaced: the X
    /// server hands a new client the ids of the one that just left.)
    @discardableResult
    public func waitForWindow(named title: String, timeout: Double = 30) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let window = windows(named: title).first {
                // Mapped is not yet drawn and ready for keys; a moment more avoids lost keystrokes.
                usleep(400_000)
                try focus(window)
                return window
            }
            if Date() >= deadline { break }
            usleep(100_000)
        }
        throw TestFailure("no window titled \"\(title)\" appeared within \(timeout) s (windows now: \(titles()))")
    }

    /// Gives `window` the keyboard, and checks that it has it.
    public func focus(_ window: String) throws {
        try xdotool(["windowfocus", "--sync", window])
        let focused = try xdotool(["getwindowfocus"]).trimmingCharacters(in: .whitespacesAndNewlines)
        guard focused == window else { throw TestFailure("window \(window) did not take the keyboard (\(focused) has it)") }
    }

    /// The titles of the mapped windows that have one, for failure messages.
    public func titles() -> [String] {
        windows(named: "").compactMap { try? xdotool(["getwindowname", $0]).trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
    }

    /// Types `text` into the focused window, then presses `key` (e.g. Return).
    public func type(_ text: String, thenPress key: String? = nil) throws {
        try xdotool(["type", "--delay", "40", text])
        if let key { try xdotool(["key", key]) }
    }

    /// The pixels of `window` as raw RGB, to tell whether something in it changed.
    public func pixels(of window: String) throws -> [UInt8] {
        let file = NSTemporaryDirectory() + "/window-\(getpid())-\(window).rgb"
        defer { unlink(file) }
        try Shell.run("/usr/bin/import", ["-window", window, "-depth", "8", "rgb:" + file],
                      environment: toolEnvironment)
        return Array(try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    /// How many pixels differ between two captures of one window (all of them when its size changed).
    static func differingPixels(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard a.count == b.count else { return max(a.count, b.count) / 3 }
        var count = 0
        var i = 0
        while i + 2 < a.count {
            if a[i] != b[i] || a[i + 1] != b[i + 1] || a[i + 2] != b[i + 2] { count += 1 }
            i += 3
        }
        return count
    }

    /// Waits until `window` stops changing (drawn, activated; a blinking text cursor is
    /// under `noise` pixels) and returns how it looks then.
    public func settled(_ window: String, noise: Int = 40, within timeout: Double = 5) throws -> [UInt8] {
        let deadline = Date().addingTimeInterval(timeout)
        var last = try pixels(of: window)
        while Date() < deadline {
            usleep(250_000)
            let now = try pixels(of: window)
            if Self.differingPixels(last, now) < noise { return now }
            last = now
        }
        return last
    }

    /// Whether `window` comes to look different from `before` by `noise` pixels or more within `timeout`.
    public func changes(_ window: String, from before: [UInt8], noise: Int = 40, within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let now = try? pixels(of: window), Self.differingPixels(before, now) >= noise { return true }
            usleep(100_000)
        } while Date() < deadline
        return false
    }

    /// Saves the whole screen as a PNG at `path`.
    public func screenshot(to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Shell.run("/usr/bin/import", ["-window", "root", path], environment: toolEnvironment)
    }
}

extension Repository {
    /// Where tests leave files for people to look at (screenshots): `.build/test-artifacts/`.
    public static var artifacts: String { root + "/.build/test-artifacts" }
}
