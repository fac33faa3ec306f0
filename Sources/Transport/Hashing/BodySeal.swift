/// The checksum a request's head announced for a body streamed from a file, checked as the
/// body is read: its last bytes go only when everything read matches (`RequestBody.file`).
/// For a server that keeps a checksum as sent, without checking it against the bytes
/// (Nextcloud's `OC-Checksum`): the file, read once for the checksum and again as it is
/// sent, may change in between, and the server must never keep a file under a checksum
/// of other bytes.
public final class BodySeal {
    private let digest: ChunkDigest
    private let expected: [UInt8]

    public init(_ algorithm: ChecksumAlgorithm, expecting expected: [UInt8]) {
        digest = ChunkDigest(algorithm)
        self.expected = expected
    }

    /// The body's bytes as they are read, in order, each once.
    func update(_ bytes: UnsafeRawBufferPointer) { digest.update(bytes) }

    /// Whether the bytes read so far make the announced checksum; asked once, at the end.
    var isKept: Bool { digest.bytes == expected }
}
