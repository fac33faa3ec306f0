import Glibc
import Platform
import Testing

/// `ResidentCode.releaseStartUp()`: the code of the program and its libraries leaves this
/// process's resident memory, and everything runs on, on every thread.
@Suite("code given back after start-up")
struct ResidentCodeTests {
    /// Resident kB of this process's executable file mappings (`/proc/self/smaps`).
    private static func residentCodeKB() throws -> Int {
        let text = try FileIO.readSmallFile("/proc/self/smaps", limit: 64 << 20)
        var total = 0, inCode = false
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), fields.count >= 2, !range.hasSuffix(":") {
                inCode = fields[1] == "r-xp" && fields.count >= 6 && fields[5].hasPrefix("/")
            } else if inCode, fields.first == "Rss:", fields.count >= 2, let kb = Int(fields[1]) {
                total += kb
            }
        }
        return total
    }

    private static func work(_ n: Int) -> Int {
        var words: [String: Int] = [:]
        for i in 0..<n { words["w\(i % 97)", default: 0] += i }
        return words.values.reduce(0, &+)
    }

    @Test("the code's pages leave the process, and the code runs on, on another thread too")
    func released() async throws {
        let expected = Self.work(20_000)
        let before = try Self.residentCodeKB()
        let elsewhere = JoinedThread.spawned { Self.work(200_000) }
        let released = ResidentCode.releaseStartUp()
        let after = try Self.residentCodeKB()
        #expect(released > 0)
        #expect(after < before, "resident code \(before) kB before, \(after) kB after; \(released) bytes released")
        #expect(Self.work(20_000) == expected)
        #expect(elsewhere.join() == Self.work(200_000))
    }
}

/// A thread of its own that computes a number, joined for it.
private final class JoinedThread: @unchecked Sendable {
    private var thread = pthread_t()
    private let body: @Sendable () -> Int
    private var value = 0

    private init(_ body: @escaping @Sendable () -> Int) { self.body = body }

    static func spawned(_ body: @escaping @Sendable () -> Int) -> JoinedThread {
        let t = JoinedThread(body)
        let rc = pthread_create(&t.thread, nil, { raw in
            let t = Unmanaged<JoinedThread>.fromOpaque(raw!).takeUnretainedValue()
            t.value = t.body()
            return nil
        }, Unmanaged.passUnretained(t).toOpaque())
        precondition(rc == 0)
        return t
    }

    func join() -> Int {
        pthread_join(thread, nil)
        return value
    }
}
