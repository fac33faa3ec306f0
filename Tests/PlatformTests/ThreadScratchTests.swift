import Glibc
import Platform
import Testing

@Suite("a thread's scratch buffer")
struct ThreadScratchTests {
    /// Where a buffer lent on a fresh thread starts, as a number (pointers do not cross threads).
    private static func address(_ buffer: UnsafeMutableRawBufferPointer) -> Int { Int(bitPattern: buffer.baseAddress) }

    @Test("a photo after another on the same thread gets the same memory, grown when it is larger")
    func reused() throws {
        let (first, second, larger, again) = try DedicatedThread.run {
            let a = ThreadScratch.lend(byteCount: 300_000)
            let first = Self.address(a)
            a.storeBytes(of: 7, toByteOffset: 299_999, as: UInt8.self)
            ThreadScratch.giveBack(a)
            // Were `a` freed, this would most likely be given its memory, and `b` other memory.
            let blocker = UnsafeMutableRawBufferPointer.allocate(byteCount: 300_000, alignment: 64)
            defer { blocker.deallocate() }
            let b = ThreadScratch.lend(byteCount: 290_000)
            let second = Self.address(b)
            ThreadScratch.giveBack(b)
            let c = ThreadScratch.lend(byteCount: 900_000)
            #expect(c.count == 900_000)
            let larger = Self.address(c)
            ThreadScratch.giveBack(c)
            let d = ThreadScratch.lend(byteCount: 310_000)
            let again = Self.address(d)
            ThreadScratch.giveBack(d)
            return (first, second, larger, again)
        }
        #expect(first == second)
        #expect(larger == again)
    }

    @Test("a second loan on a thread, and one above the limit, get memory of their own")
    func ownMemory() throws {
        let distinct = try DedicatedThread.run {
            let lent = ThreadScratch.lend(byteCount: 1000)
            let nested = ThreadScratch.lend(byteCount: 1000)
            let large = ThreadScratch.lend(byteCount: ThreadScratch.limit + 1)
            let addresses = Set([lent, nested, large].map(Self.address))
            #expect(large.count == ThreadScratch.limit + 1)
            ThreadScratch.giveBack(large)
            ThreadScratch.giveBack(nested)
            ThreadScratch.giveBack(lent)
            // Given back, the thread's own is lent again.
            let again = ThreadScratch.lend(byteCount: 1000)
            defer { ThreadScratch.giveBack(again) }
            return addresses.count == 3 && Self.address(again) == Self.address(lent)
        }
        #expect(distinct)
    }

    @Test("two threads never share one")
    func perThread() throws {
        let gate = Locked(0)
        let seen = Locked<[Int]>([])
        let threads = try (0..<2).map { _ in
            try DedicatedThread {
                let buffer = ThreadScratch.lend(byteCount: 200_000)
                seen.withLock { $0.append(Self.address(buffer)) }
                gate.withLock { $0 += 1 }
                // Both hold theirs at once before either gives it back.
                while gate.withLock({ $0 }) < 2 { usleep(1000) }
                ThreadScratch.giveBack(buffer)
            }
        }
        for thread in threads { thread.join() }
        #expect(Set(seen.withLock { $0 }).count == 2)
    }
}
