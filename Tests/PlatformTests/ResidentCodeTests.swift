import Dispatch
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
        let result = Locked<Int?>(nil)
        let running = DispatchSemaphore(value: 0)
        let elsewhere = try DedicatedThread {
            running.signal()
            let value = Self.work(300_000)
            result.withLock { $0 = value }
        }
        running.wait()
        let released = ResidentCode.releaseStartUp()
        // Read at once: the tests running beside this one in the process bring back the
        // pages their code touches, the longer the more (the thread's work takes a while).
        let after = try Self.residentCode()
        elsewhere.join()
        // Only the mappings there before: a test running beside this one may load a library.
        let kept = before.keys.reduce(0) { $0 + (after[$1] ?? 0) }
        let had = before.values.reduce(0, +)
        #expect(released > 0)
        #expect(kept * 2 < had, "resident code \(had) kB before, \(kept) kB after; \(released) bytes released")
        #expect(Self.work(20_000) == expected.0)
        #expect(result.withLock { $0 } == expected.1)
    }
}
