@testable import Engine
import Transport
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

    @Test("chunks stay within the server's bounds: its minimum, its maximum, and enough for at most its chunk count")
    func withinServerBounds() {
        let nextcloud = UploadCapabilities(minChunkSize: 5 << 20, maxChunkSize: 5_000_000_000, maxChunkCount: 10_000)
        #expect(ChunkSizing.bounds(for: nextcloud, size: 1 << 30) == (5 << 20)...5_000_000_000)
        // 100 GB in at most 10,000 chunks: each at least 10 MB.
        #expect(ChunkSizing.bounds(for: nextcloud, size: 100_000_000_000).lowerBound == 10_000_000)
        #expect(ChunkSizing.bounds(for: nextcloud, size: 100_000_000_001).lowerBound == 10_000_001)
        #expect(ChunkSizing.bounds(for: UploadCapabilities(), size: 1 << 40) == 1...Int64.max)
        var small = settings
        small.chunkSize = 1 << 20
        let bounds = ChunkSizing.bounds(for: nextcloud, size: 1 << 30)
        #expect(ChunkSizing.next(after: 5 << 20, took: 600, settings: small, within: bounds) == 5 << 20, "never under the minimum")
        let capped = ChunkSizing.bounds(for: UploadCapabilities(maxChunkSize: 10_000_000), size: 1 << 30)
        #expect(ChunkSizing.next(after: 16 << 20, took: 0.01, settings: settings, within: capped) == 10_000_000, "never over the maximum")
        // Where the minimum and the maximum cross, the minimum wins.
        #expect(ChunkSizing.bounds(for: UploadCapabilities(minChunkSize: 8, maxChunkSize: 4), size: 100) == 8...8)
    }
}
