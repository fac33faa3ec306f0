@testable import Engine
import Testing

@Suite("Chunk sizes adapt to the link")
struct ChunkSizingTests {
    let settings: TransferSettings = {
        var s = TransferSettings()
        s.chunkSize = 16 << 20
        s.chunkSeconds = 10
        s.maxChunkSize = 512 << 20
        return s
    }()

    @Test("a fast link grows the chunk, at most doubling, up to the maximum")
    func grows() {
        #expect(ChunkSizing.next(after: 16 << 20, took: 0.05, settings: settings) == 32 << 20)
        #expect(ChunkSizing.next(after: 512 << 20, took: 1, settings: settings) == 512 << 20)
    }

    @Test("a slow link shrinks it toward about ten seconds a chunk, never below the configured size")
    func shrinks() {
        #expect(ChunkSizing.next(after: 256 << 20, took: 40, settings: settings) == 64 << 20)
        #expect(ChunkSizing.next(after: 32 << 20, took: 600, settings: settings) == 16 << 20)
    }
}
