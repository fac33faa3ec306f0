import TestSupport
import Testing
import Transport

@Suite("The hash beside the transfer")
struct PipelinedHasherTests {
    /// The digest of `data` handed over in pieces of `piece` bytes, with the state read (a
    /// checkpoint) after each `drainEvery` pieces.
    func digest(_ data: [UInt8], piece: Int, drainEvery: Int = .max) -> (String, [UInt8]) {
        let hasher = PipelinedHasher(RunningSHA256(), depth: 3, bufferSize: 64 * 1024, inlineLimit: 64 * 1024)
        defer { hasher.stop() }
        var checkpoint: [UInt8] = []
        var handed = 0
        for (n, start) in stride(from: 0, to: data.count, by: piece).enumerated() {
            data[start..<min(start + piece, data.count)].withUnsafeBytes { hasher.observe($0) }
            handed = min(start + piece, data.count)
            if (n + 1) % drainEvery == 0 {
                hasher.drain()
                checkpoint = hasher.sha.state
                #expect(hasher.sha.count == Int64(handed), "the state covers exactly the bytes handed over")
            }
        }
        hasher.drain()
        return (hasher.sha.hexDigest, checkpoint)
    }

    func oneShot(_ data: [UInt8]) -> String {
        let sha = RunningSHA256()
        data.withUnsafeBytes { sha.update($0) }
        return sha.hexDigest
    }

    // Below the first buffer (hashed as it comes, no thread), across it, and many buffers
    // with pieces that never line up with them.
    @Test("any size in any pieces hashes as one pass does, inline or on the thread",
          arguments: [(10_000, 1_000), (64 * 1024, 64 * 1024), (64 * 1024 + 1, 4_096), (700_000, 37_000), (700_000, 200_000)])
    func pieces(size: Int, piece: Int) {
        let data = TestData.bytes(count: size, seed: UInt64(size))
        #expect(digest(data, piece: piece).0 == oneShot(data))
    }

    @Test("a state read part way (a checkpoint) covers exactly the bytes before it and resumes to the same digest")
    func checkpoint() throws {
        let data = TestData.bytes(count: 500_000, seed: 9)
        let (whole, saved) = digest(data, piece: 30_000, drainEvery: 7)
        #expect(whole == oneShot(data))
        let resumed = try #require(RunningSHA256(state: saved))
        let at = Int(resumed.count)
        #expect(at == 420_000, "the last checkpoint, after 14 pieces")
        data[at...].withUnsafeBytes { resumed.update($0) }
        #expect(resumed.hexDigest == whole)
    }

    @Test("starting over forgets what was handed before, whether it is still in a buffer or hashed")
    func startOver() {
        let data = TestData.bytes(count: 300_000, seed: 4)
        let hasher = PipelinedHasher(RunningSHA256(), depth: 3, bufferSize: 64 * 1024, inlineLimit: 64 * 1024)
        defer { hasher.stop() }
        data.withUnsafeBytes { hasher.observe($0) }
        hasher.startOver()
        data[..<1000].withUnsafeBytes { hasher.observe($0) }
        hasher.drain()
        #expect(hasher.sha.hexDigest == oneShot(Array(data[..<1000])))
    }
}
