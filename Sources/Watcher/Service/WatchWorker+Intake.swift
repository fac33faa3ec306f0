import Platform
import Queue

/// Found files into the queue: each rule's batch checked against its memory (by path and
/// fingerprint, then by content when another file it took has the same size), planned
/// into the rule's remote folders, and queued with its records in one transaction.
extension WatchWorker {
    /// A file about to be queued, with its SHA-256 once something made it worth computing.
    struct Planned {
        var file: FoundFile
        var sha256: String?
    }

    /// Takes a run of found files, rule by rule. Safe to repeat after an error: files
    /// already recorded are skipped.
    func take(_ messages: ArraySlice<WatchInbox.Message>, store: QueueStore) throws {
        var byRule: [String: [FoundFile]] = [:]
        var order: [String] = []
        for case .found(let rule, let file) in messages {
            if byRule[rule] == nil { order.append(rule) }
            byRule[rule, default: []].append(file)
        }
        for rule in order { try take(byRule[rule] ?? [], rule: rule, store: store) }
    }

    private func take(_ files: [FoundFile], rule id: String, store: QueueStore) throws {
        // A rule that is gone since: if it comes back, its watcher finds these files again.
        guard let run = running[id] ?? retired[id] else { return }
        // Hashing happens here, outside the transaction: the database is never held
        // while a large file is read. What the rule took is read once for the whole batch.
        let recorded = try store.takenFingerprints(rule: id, paths: files.map(\.path))
        let fresh = files.filter { recorded[$0.path] != $0.fingerprint }
        var memory = ContentMemory(taken: try store.takenContent(rule: id, sizes: Set(fresh.map(\.fingerprint.size))))
        var planned: [Planned] = []
        var duplicates: [TakenFile] = []
        for file in fresh {
            let (original, sha) = sameContent(as: file, memory: &memory, planned: &planned)
            if let original, let sha {
                duplicates.append(TakenFile(path: file.path, fingerprint: file.fingerprint, kind: .duplicate, sha256: sha))
                Log.info("\(file.path.display): the same content as \(original.display), which rule \(id) already took; not sent again")
            } else {
                planned.append(Planned(file: file, sha256: sha))
            }
        }
        guard !planned.isEmpty || !duplicates.isEmpty else { return }
        let items = planned.map { Intake.PlannedUpload(file: $0.file.path,
                                                       remotePath: RemotePathPlanner.remotePath(for: $0.file.path, capturedAt: $0.file.media.captureDate,
                                                                                                rule: run.rule)) }
        // The account went away meanwhile (`account remove`): the rule waits for one, and
        // these files, not recorded, are found again when it runs.
        guard let account = try store.account(id: run.account.id) else {
            stopForMissingAccount(id)
            return
        }
        var queued: [(LocalPath, String)] = []
        let written: Bool = try store.database.transaction(durable: true) {
            // Removed meanwhile (`watch remove`): nothing is queued for it.
            guard try store.watchMemory(rule: id) != nil else { return false }
            for (path, sha256) in memory.learnt { try store.setTakenSHA256(rule: id, path: path, sha256: sha256) }
            let outcomes = try Intake.enqueuePlanned(items, account: account, origin: .auto, watchRule: id, store: store)
            var records = duplicates
            for ((entry, item), outcome) in zip(zip(planned, items), outcomes) {
                switch outcome {
                case .success(let queuedAs):
                    queued.append((entry.file.path, item.remotePath))
                    // A file that changed since it settled is recorded as it is queued.
                    let sha = queuedAs.fingerprint == entry.file.fingerprint ? entry.sha256 : nil
                    records.append(TakenFile(path: entry.file.path, fingerprint: queuedAs.fingerprint, kind: .upload, sha256: sha,
                                             transferID: queuedAs.id))
                    if queuedAs.fingerprint != entry.file.fingerprint { run.memory.taken.insert(queuedAs.fingerprint, at: entry.file.path) }
                case .failure(let refusal):
                    Log.warning("rule \(id): not queued: \(refusal)")
                }
            }
            return try store.recordTaken(rule: id, records)
        }
        guard written else { return }
        statusDirty.insert(id)
        if let (path, remote) = queued.first {
            Log.info("rule \(id): queued " + (queued.count == 1 ? "\(path.display) -> \(remote)" : "\(queued.count) new files"))
            options.wake()
        }
    }

    /// A running rule whose account is gone: its watcher stops until the account is back.
    private func stopForMissingAccount(_ id: String) {
        guard let run = running.removeValue(forKey: id) else { return }
        run.watcher.stop()
        // Its other found files still in the backlog are dropped with it (no rule to take them).
        retired[id] = nil
        if let rule = rules.first(where: { $0.id == id }) { wait(rule, .accountMissing(rule.account ?? run.account.name)) }
    }

    /// The files a rule took that a batch's files could have the same content as, with
    /// the digests learnt while comparing, to record with the batch.
    struct ContentMemory {
        var taken: [Int64: [TakenFile]]
        var learnt: [LocalPath: String] = [:]
    }

    /// Another file this rule took (or is about to queue in this batch) with the same
    /// content as `file`, and `file`'s SHA-256 when it was computed. Only files of the
    /// same size can match, so nothing is hashed unless one exists; a file already taken
    /// is hashed at most once (its digest is recorded), and uploads record theirs.
    private func sameContent(as file: FoundFile, memory: inout ContentMemory,
                             planned: inout [Planned]) -> (original: LocalPath?, sha256: String?) {
        let size = file.fingerprint.size
        let batch = planned.indices.filter { planned[$0].file.fingerprint.size == size }
        var taken = memory.taken[size] ?? []
        guard !taken.isEmpty || !batch.isEmpty else { return (nil, nil) }
        guard let mine = ContentHash.sha256(of: file.path, expecting: file.fingerprint) else { return (nil, nil) }
        defer { if !taken.isEmpty { memory.taken[size] = taken } }
        for index in taken.indices {
            if taken[index].sha256 == nil, let hashed = ContentHash.sha256(of: taken[index].path, expecting: taken[index].fingerprint) {
                taken[index].sha256 = hashed
                memory.learnt[taken[index].path] = hashed
            }
            if taken[index].sha256 == mine { return (taken[index].path, mine) }
        }
        for index in batch {
            if planned[index].sha256 == nil {
                planned[index].sha256 = ContentHash.sha256(of: planned[index].file.path, expecting: planned[index].file.fingerprint)
            }
            if planned[index].sha256 == mine { return (planned[index].file.path, mine) }
        }
        return (nil, mine)
    }
}
