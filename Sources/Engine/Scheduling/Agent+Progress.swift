import Platform
import Queue

/// Progress of running transfers, from memory to their rows. Transfers only count their
/// bytes (`TransferProgress`); the agent writes the counts here, between passes and a few
/// times a second while anything runs, so that `queue` and `status` see live progress and a
/// locked database holds up this thread, never a transfer's socket.
extension Agent {
    /// Writes each running transfer's position to its row, if it moved since the last write.
    /// Never fails a pass: a write the database refuses now is tried again next time.
    func writeProgress(_ store: QueueStore) {
        let moved = state.withLock { s in
            s.running.compactMap { id, running -> (Int64, Int64)? in
                let position = running.progress.position
                return position == running.progressWritten ? nil : (id, position)
            }
        }
        for (id, position) in moved {
            do {
                try store.progress(id, bytesDone: position)
                state.withLock { $0.running[id]?.progressWritten = position }
            } catch {
                Log.debug("transfer \(id): its progress could not be written this time: \(error)")
                return
            }
        }
    }
}
