import Platform
import Queue

/// `status`'s batch figures, kept by the agent: where the batch starts (when the queue goes
/// from idle to busy) and the rate over every running transfer, written at most once a second
/// while anything runs and deleted when nothing does. The rate comes from the progress the
/// transfers already record; no write per chunk is added.
extension Agent {
    /// Never fails a pass: these are figures for people, not the queue's state.
    func recordBatch(_ store: QueueStore) {
        do {
            try recordBatchStart(store)
            try recordRate(store)
        } catch {
            Log.debug("the batch's figures could not be written this time: \(error)")
        }
    }

    private func recordBatchStart(_ store: QueueStore) throws {
        // A running transfer's row is in progress: the queue is busy without asking.
        let (phase, running) = state.withLock { ($0.batch.phase, !$0.running.isEmpty) }
        if phase == .busy && running { return }
        let idle = try store.isIdle()
        if phase == (idle ? .idle : .busy) { return }
        let nowIdle = try store.markBatch()
        state.withLock { $0.batch.phase = nowIdle ? .idle : .busy }
    }

    private func recordRate(_ store: QueueStore) throws {
        let now = MonotonicClock.seconds()
        // A little early is still a second apart for the reader.
        let (due, counted, running) = state.withLock { s in
            (now - s.batch.lastSample >= BatchRecord.sampleInterval * 0.9, s.batch.throughput.rows, !s.running.isEmpty)
        }
        guard due else { return }
        if !running && counted.isEmpty {
            let written = state.withLock { s in
                s.batch.throughput.reset()
                s.batch.lastSample = now
                defer { s.batch.rateWritten = false }
                return s.batch.rateWritten
            }
            if written { try store.setAgentValue(QueueStore.rateKey, nil) }
            return
        }
        let progress = try store.runningProgress()
        let rate = state.withLock { s -> Double? in
            for (id, bytes) in progress where counted.contains(id) { s.batch.throughput.saw(id, at: bytes) }
            // A row ends where its outcome was recorded (`recordFinished`); one no longer in
            // progress without an outcome here ends where it was last seen.
            for id in counted where progress[id] == nil { s.batch.throughput.ended(id, at: nil) }
            s.batch.lastSample = now
            return s.batch.throughput.rate(at: now)
        }
        guard let rate else { return }
        try store.setAgentValue(QueueStore.rateKey, String(Int64(saturating: rate.rounded())))
        state.withLock { $0.batch.rateWritten = true }
    }
}
