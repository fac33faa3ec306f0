import Platform
import Queue
import Transport

/// Turning what a transfer reported into its row's next state, and telling the person.
extension Agent {
    /// Called on a transfer's thread when its job ends.
    func finished(_ id: Int64, _ outcome: JobOutcome) {
        state.withLock { s in
            s.finished.append(Finished(id: id, outcome: outcome, cause: s.running.removeValue(forKey: id)?.stopCause))
        }
        wake()
    }

    /// A watch rule's upload whose file is missing or cannot be read while the rule's folder
    /// is not there (a card taken out mid-backlog, a disk gone) is not gone for good: it
    /// tries again later, and its rule's gate then holds it until the folder is back. This
    /// covers a card taken out after the row started, and a row sent by hand past the gate
    /// (`retry --now`). A file missing from a folder that is there still fails.
    /// Asked on the transfer's thread: it looks at the disk.
    func waitingForItsFolder(_ outcome: JobOutcome, of row: Transfer) -> JobOutcome {
        guard case .failed(let reason) = outcome, [.sourceMissing, .sourceUnreadable].contains(reason.code),
              row.origin == .auto, let rule = row.watchRule, let away = options.folderAway?(rule, row.localPath, row.fingerprint?.device) else { return outcome }
        return .retry(Classification(reason: away), progressed: false)
    }

    /// A new version of a Local Drive file whose file is not at its name may be one renamed
    /// within Local Drive a moment ago: its rename is followed once the rename window has
    /// passed (`LocalDriveWatch`), and this row with it. It tries again once after that
    /// window (whatever it waited for before) before it fails as gone.
    func followingItsRename(_ outcome: JobOutcome, of row: Transfer) -> JobOutcome {
        guard case .failed(let reason) = outcome, reason.code == .sourceMissing, row.newVersionOf != nil,
              row.reason?.code != .sourceMissing else { return outcome }
        let wait = Double(SettleWindow.seconds) * 2 + 6
        return .retry(Classification(reason: Reason(.sourceMissing, "\(row.localPath.display) is not there; if it was renamed within Local Drive, this new version follows it"),
                                     retryAfter: wait), progressed: false)
    }

    /// Records every outcome that came in (and those the database refused before), inside
    /// the pass's transaction; the person and the watch rules hear of them once it is
    /// committed. One that cannot be written now is kept for the next pass, never lost (all
    /// of them when the whole transaction rolls back); the first such error is returned.
    func recordFinished(_ store: QueueStore, _ after: inout AfterCommit) -> Error? {
        let batch = state.withLock { s in
            defer { s.unapplied.removeAll(); s.finished.removeAll() }
            return s.unapplied + s.finished
        }
        var recorded: [Finished] = []
        var endedAt: [(id: Int64, bytes: Int64?)] = []
        var failed: [Transfer] = []
        var doneByHand: [Transfer] = []
        var completed: [Transfer] = []
        var firstError: Error?
        for item in batch {
            do {
                let applied = try apply(item.outcome, to: item.id, cause: item.cause, store: store, &after)
                let row = try applied ?? store.transfer(id: item.id)
                recorded.append(item)
                endedAt.append((item.id, row?.bytesDone))
                guard let row else { continue }
                if row.state == .failed { failed.append(row) }
                if row.state == .completed, row.origin != .auto { doneByHand.append(row) }
                if row.state == .completed, case .completed = item.outcome { completed.append(row) }
            } catch let e as IllegalTransition {
                Log.error("transfer \(item.id): \(e)")
            } catch {
                firstError = firstError ?? error
                state.withLock { $0.unapplied.append(item) }
            }
        }
        // As the pass found them, before it started anything new.
        let allEnded = state.withLock { $0.running.isEmpty && $0.finished.isEmpty }
        after.onRollback { [self] in state.withLock { $0.unapplied += recorded } }
        after.onCommit { [self] in
            state.withLock { s in
                for row in doneByHand { s.manualDone.add(row) }
                // The batch's rate counts each row's bytes up to where it stopped.
                for (id, bytes) in endedAt { s.batch.throughput.ended(id, at: bytes) }
            }
            for row in completed { options.onCompleted?(row) }
            tellAttention(failed, allEnded: allEnded)
            tellBatchDone(store)
        }
        return firstError
    }

    /// Records what came in, in a transaction of its own: the agent's last act before it stops.
    func recordOutcomes(_ store: QueueStore) throws {
        var failure: Error?
        try AfterCommit.transaction(on: store.database) { after in failure = recordFinished(store, &after) }
        if let failure { throw failure }
    }

    /// The person's "all done": once the last of their transfers ended and nothing they
    /// asked for waits. While one of theirs still runs, there is no need to ask the queue;
    /// when it cannot answer, the next pass asks again.
    private func tellBatchDone(_ store: QueueStore) {
        let (done, manualRunning) = state.withLock { s in (s.manualDone, s.running.values.contains { $0.isManual }) }
        guard !done.isEmpty, !manualRunning, (try? store.isIdle(countingAuto: false)) == true else { return }
        state.withLock { $0.manualDone = DoneByHand() }
        options.onBatchDone?(done)
    }

    /// Failures that come close together are told together: once nothing else was running
    /// and no ended transfer waited to be applied as the pass recorded them (one that ended
    /// while it wrote is told with these, on the next pass), or a few seconds after the first.
    private func tellAttention(_ failed: [Transfer], allEnded: Bool) {
        let now = MonotonicClock.seconds()
        let tell: [Transfer] = state.withLock { s in
            if !failed.isEmpty {
                if s.pendingFailed.isEmpty { s.firstPendingAt = now }
                s.pendingFailed += failed
            }
            guard !s.pendingFailed.isEmpty, allEnded || now - s.firstPendingAt >= Self.attentionDelay else { return [] }
            defer { s.pendingFailed.removeAll() }
            return s.pendingFailed
        }
        if !tell.isEmpty { options.onAttention?(tell) }
    }

    /// The row as the outcome left it, where the transition read it already. What the
    /// rest of this pass must go by (a busy server, a refused password) changes at once;
    /// what is told waits for the commit.
    private func apply(_ outcome: JobOutcome, to id: Int64, cause: StopCause?, store: QueueStore,
                       _ after: inout AfterCommit) throws -> Transfer? {
        guard let row = try store.transfer(id: id) else { return nil }
        if cause == .cancel || row.cancelRequested {
            startCancel(row)
            return nil
        }
        switch outcome {
        case .completed(let sha, let bytes, let verified, let counters):
            let completed = try store.complete(row, sha256: sha, bytes: bytes, verified: verified, counters: counters)
            recovered(accountID: row.accountID)
            after.onCommit {
                Log.info("\(row.direction == .upload ? "uploaded" : "downloaded") \(row.name) -> \(row.direction == .upload ? "\(row.accountName):\(row.remotePath)" : row.localPath.display)")
            }
            return completed
        case .failed(let reason):
            try store.fail(id, reason: reason)
            // The server refused the password: read it again for the next transfer, so a
            // changed password is picked up once the person has saved it.
            if reason.code == .auth { passwords.forget(accountID: row.accountID) }
            after.onCommit {
                Log.warning("\(row.name): \(reason.message)")
            }
        case .retry(_, _) where isHeldByPerson(row):
            // Paused meanwhile: it waits for the person, not for a backoff.
            try store.requeue(id, reason: heldReason(for: row, cause: cause))
        case .retry(let classification, let progressed):
            if [.serverBusy, .maintenance].contains(classification.reason.code) {
                easeOff(accountID: row.accountID, retryAfter: classification.retryAfter, reason: classification.reason)
            }
            if classification.reason.code == .maintenance, let account = try store.account(id: row.accountID) {
                // A 503: status.php says whether the administrator has the server in maintenance.
                maintenance.serverUnavailable(account) { [self] in wake() }
            }
            let attempts = progressed ? 1 : row.attempts + 1
            let (delay, reason) = options.backoff.wait(after: classification, attempt: attempts)
            let at = nowMilliseconds() + Int64(saturating: delay * 1000)
            try store.retryLater(id, reason: reason, at: at, attempts: attempts)
            if classification.saysServerFails {
                serverFailed(accountID: row.accountID, row: row.id, reason: reason, until: at)
            } else {
                reached(accountID: row.accountID)
            }
            after.onCommit {
                let tenths = Int64(saturating: (delay * 10).rounded())
                Log.info("\(row.name): \(reason.message); retrying in \(tenths / 10).\(tenths % 10) s (attempt \(attempts))")
            }
        case .stopped:
            try store.requeue(id, reason: heldReason(for: row, cause: cause))
        }
        return nil
    }
}
