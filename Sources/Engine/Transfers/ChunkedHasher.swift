import Transport

/// The running SHA-256 plus the state it had when the current chunk began, so a chunk the
/// server only partly kept can be rewound. Hashing runs on its own thread, overlapping
/// with the send; every read of the state waits for it to catch up.
final class ChunkedHasher: ByteObserver {
    private let pipeline: PipelinedHasher
    private(set) var savedBeforeChunk: [UInt8]

    init(_ sha: RunningSHA256) {
        pipeline = PipelinedHasher(sha)
        savedBeforeChunk = sha.state
    }

    deinit { pipeline.stop() }

    func observe(_ bytes: UnsafeRawBufferPointer) { pipeline.observe(bytes) }
    func markChunkStart() { savedBeforeChunk = state }
    func replace(with sha: RunningSHA256) {
        pipeline.replace(sha)
        savedBeforeChunk = state
    }
    var sha: RunningSHA256 { pipeline.drain(); return pipeline.sha }
    var state: [UInt8] { sha.state }
    var hexDigest: String { sha.hexDigest }
}
