/// A source that stops answering after a fixed number of requests or bytes, so no input,
/// however it is built, makes the readers read a file without end.
final class BudgetedSource: ByteSource {
    private let base: any ByteSource
    private var requestsLeft: Int
    private var bytesLeft: Int

    init(_ base: any ByteSource, requests: Int = 256, bytes: Int = 4 << 20) {
        self.base = base
        self.requestsLeft = requests
        self.bytesLeft = bytes
    }

    var count: UInt64 { base.count }
    var isExhausted: Bool { requestsLeft <= 0 || bytesLeft <= 0 }

    func bytes(at offset: UInt64, length: Int) -> [UInt8] {
        guard requestsLeft > 0, bytesLeft > 0 else { return [] }
        requestsLeft -= 1
        let result = base.bytes(at: offset, length: min(length, bytesLeft))
        bytesLeft -= result.count
        return result
    }
}
