import Glibc
import Synchronization

/// A thread-safe flag a transfer checks while it runs; setting it stops the transfer at once.
public final class CancellationFlag: Sendable {
    private let value = Atomic<Int>(0)
    public init() {}
    public func cancel() { value.store(1, ordering: .relaxed) }
    public var isCancelled: Bool { value.load(ordering: .relaxed) != 0 }
}
