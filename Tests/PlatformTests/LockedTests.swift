import Dispatch
import Platform
import Testing

@Suite("Locked: the one lock")
struct LockedTests {
    @Test("eight threads adding 10,000 times each lose no addition")
    func noLostUpdates() {
        let counter = Locked([Int: Int]())
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for i in 0..<10_000 { counter.withLock { $0[i % 7, default: 0] += 1 } }
        }
        #expect(counter.withLock { $0.values.reduce(0, +) } == 80_000)
    }

    @Test("a throwing body leaves the lock free and the value as the body left it")
    func throwingBody() {
        struct Stop: Error {}
        let value = Locked(1)
        #expect(throws: Stop.self) { try value.withLock { v throws(Stop) in v = 2; throw Stop() } }
        #expect(value.withLock { $0 } == 2)
    }
}
