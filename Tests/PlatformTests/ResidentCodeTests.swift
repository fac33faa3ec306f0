import Glibc
import Platform
import Testing

/// `ResidentCode.releaseStartUp()`: the code of the program and its libraries leaves this
/// process's resident memory, and everything runs on, on every thread.
@Suite("code given back after start-up")
struct ResidentCodeTests {
    /// Resident kB of each of this process's executable file mappings (`/proc/self/smaps`),
    /// by address range.
    private static func residentCode() throws -> [String: Int] {
        let text = try FileIO.readSmallFile("/proc/self/smaps", limit: 64 << 20)
        var resident: [String: Int] = [:]
        var range: String?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), !first.hasSuffix(":") {
                range = fields.count >= 6 && fields[1] == "r-xp" && fields[5].hasPrefix("/") ? String(first) : nil
            } else if let current = range, fields.first == "Rss:", fields.count >= 2, let kb = Int(fields[1]) {
                resident[current] = kb
            }
        }
        return resident
    }

    private static func work(_ n: Int) -> Int {
        var words: [String: Int] = [:]
        for i in 0..<n { words["w\(i % 97)", default: 0] += i }
        return words.values.reduce(0, &+)
    }

    @Test("the code's pages leave the process, and the code runs on, on another thread too")
    func released() throws {
        let expected = (Self.work(20_000), Self.work(300_000))
        let before = try Self.residentCode()
        let elsewhere = JoinedThread { Self.work(300_000) }
        defer { _ = elsewhere.join() }
        elsewhere.waitUntilRunning()
        let released = ResidentCode.releaseStartUp()
        let after = try Self.residentCode()
        // Only the mappings there before: a test running beside this one may load a library.
        let kept = before.keys.reduce(0) { $0 + (after[$1] ?? 0) }
        let had = before.values.reduce(0, +)
        #expect(released > 0)
        #expect(kept * 2 < had, "resident code \(had) kB before, \(kept) kB after; \(released) bytes released")
        #expect(Self.work(20_000) == expected.0)
        #expect(elsewhere.join() == expected.1)
    }
}

/// A thread of its own that computes a number, joined for it.
private final class JoinedThread: @unchecked Sendable {
    // Sendable by construction: `value` is written by the thread before it ends and read
    // after `pthread_join`; `running` is written and read under `condition`.
    private var thread = pthread_t()
    private let body: @Sendable () -> Int
    private var value = 0
    private var joined = false
    private var running = false
    private let condition = Condition()

    init(_ body: @escaping @Sendable () -> Int) {
        self.body = body
        let rc = pthread_create(&thread, nil, { raw in
            let t = Unmanaged<JoinedThread>.fromOpaque(raw!).takeRetainedValue()
            t.condition.lock()
            t.running = true
            t.condition.broadcast()
            t.condition.unlock()
            t.value = t.body()
            return nil
        }, Unmanaged.passRetained(self).toOpaque())
        precondition(rc == 0)
    }

    func waitUntilRunning() {
        condition.lock()
        while !running { condition.wait() }
        condition.unlock()
    }

    func join() -> Int {
        if !joined {
            pthread_join(thread, nil)
            joined = true
        }
        return value
    }
}
