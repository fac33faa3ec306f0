import Platform
import Queue
import Transport

/// Cancellation: running transfers are stopped where they are; the clean-up (the upload on
/// the server, the `.part` here, the row) runs on a thread of its own, so a server that is
/// slow to answer the DELETE never holds up the rest of the queue.
extension Agent {
    func handleCancellations(_ store: QueueStore) throws {
        for row in try store.cancelRequested() {
            let idle = state.withLock { s -> Bool in
                // Being cleaned up already, or its job's outcome is on the way (which then cancels).
                if s.cancelling[row.id] != nil || (s.unapplied + s.finished).contains(where: { $0.id == row.id }) { return false }
                return !s.stopRunning(row.id, because: .cancel)
            }
            if idle { startCancel(row) }
        }
    }

    /// Starts the clean-up of a cancelled row that nothing runs any more.
    func startCancel(_ row: Transfer) {
        let cancellation = CancellationFlag()
        let started = state.withLock { s -> Bool in
            guard s.cancelling[row.id] == nil else { return false }
            s.cancelling[row.id] = cancellation
            return true
        }
        guard started else { return }
        let path = options.paths.queueDatabase
        let settings = options.settings
        let passwords = self.passwords
        let running = DedicatedThread.startDetached(name: "cancel-\(row.id)") { [self] in
            do {
                let store = try QueueStore(path: path)
                try CancelJob(id: row.id, settings: settings, cancellation: cancellation).run(store: store) { account in
                    passwords.credentialsNow(for: account)
                }
            } catch {
                // The row keeps its cancel request: the next pass tries again.
                Log.warning("\(row.name): the cancellation is not finished yet (\(error)); trying again")
            }
            state.withLock { _ = $0.cancelling.removeValue(forKey: row.id) }
            wake()
        }
        // The row keeps its cancel request: a later pass tries again.
        if !running { state.withLock { _ = $0.cancelling.removeValue(forKey: row.id) } }
    }
}
