import Platform
import Queue

/// Progress of running transfers, from memory to their rows. Transfers only count their
/// bytes (`TransferProgress`); the agent writes the counts here, between passes and a few
/// times a second while anything runs, so that `queue` and `status` see live progress and a
/// locked database holds up this thread, never a transfer's socket.
extension Agent {
    /// Writes each running transfer's position to its row, if it moved since the last write,
    /// all in one commit, at most once per `progressInterval`: a card of small photos runs a
    /// pass for nearly every photo, and each photo's position, written a moment before its
    /// row completes, was a commit that no one would ever see.
    /// Never fails a pass: a write the database refuses now is tried again next time.
    func writeProgress(_ store: QueueStore) {
        let now = MonotonicClock.seconds()
        let moved = state.withLock { s -> [(id: Int64, bytesDone: Int64)] in
            guard now - s.progressWrittenAt >= options.settings.progressInterval else { return [] }
            return s.running.compactMap { id, running -> (id: Int64, bytesDone: Int64)? in
                let position = running.progress.position
                return position == running.progressWritten ? nil : (id, position)
            }
        }
        guard !moved.isEmpty else { return }
        do {
            try store.progress(moved)
        } catch {
            Log.debug("the progress of \(moved.count) transfer(s) could not be written this time: \(error)")
            return
        }
        state.withLock { s in
            for (id, position) in moved { s.running[id]?.progressWritten = position }
            s.progressWrittenAt = now
        }
    }
}
