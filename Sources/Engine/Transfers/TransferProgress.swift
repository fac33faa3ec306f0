import Synchronization

/// How far one running transfer has got, in bytes, kept in memory. Its `ProgressRecorder`
/// sets it from inside the transfer's callbacks, where a database write could stall the
/// socket for as long as another program holds the queue locked; the agent reads it a few
/// times a second and writes it to the row (`Agent.writeProgress`).
public final class TransferProgress: Sendable {
    private let bytes: Atomic<Int64>

    public init(_ bytes: Int64 = 0) { self.bytes = Atomic(bytes) }

    /// Where the transfer stands in its file.
    public var position: Int64 { bytes.load(ordering: .relaxed) }

    func set(_ position: Int64) { bytes.store(position, ordering: .relaxed) }
}
