import Glibc
import Platform
import Queue
import Transport

/// Counts a transfer's bytes as they pass, into its `TransferProgress`. It runs inside
/// libcurl's callbacks, so it never touches the database: a locked queue must not stall
/// the socket. The agent writes the count to the row on its own schedule.
final class ProgressRecorder: RestartableObserver {
    let progress: TransferProgress?
    let next: ByteObserver?
    /// Where the transfer stands in the file, in bytes.
    private(set) var position: Int64
    /// Bytes that passed through this recorder.
    private(set) var bytesRead: Int64 = 0
    /// The server sent the whole file again, from byte 0: the bytes before the old
    /// position, and whatever was derived from them (a checkpoint's hash), are stale.
    private(set) var startedOver = false

    init(progress: TransferProgress?, position: Int64, next: ByteObserver?) {
        self.progress = progress; self.position = position; self.next = next
        progress?.set(position)
    }

    func observe(_ bytes: UnsafeRawBufferPointer) {
        next?.observe(bytes)
        position += Int64(bytes.count)
        bytesRead += Int64(bytes.count)
        progress?.set(position)
    }

    func startOver() {
        if let next {
            guard let restartable = next as? RestartableObserver else {
                preconditionFailure("a download's hash must be able to start over, and \(type(of: next)) cannot")
            }
            restartable.startOver()
        }
        position = 0
        startedOver = true
        progress?.set(0)
    }
}

