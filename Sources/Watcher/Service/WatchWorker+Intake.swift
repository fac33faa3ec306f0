import Glibc
import Platform
import Queue

/// Found files into the queue: each rule's batch checked against its memory (by path and
/// fingerprint, then by content when another file it took has the same size), planned
/// into the rule's remote folders, and queued with its records in one transaction.
///
/// One waiting upload per path: a new version of a file whose upload has not started goes
/// to that upload; one whose upload runs is left to it (the upload starts again with what
/// the file is once it is still); one whose content was sent already is only remembered
/// anew. Content the rule took under another name is not sent again once that upload has
/// completed; until then the copy waits on it, and is sent itself if that upload fails,
/// goes away, or sends another version of its file.
extension WatchWorker {
    /// A file about to be queued, with its SHA-256 once something made it worth computing.
    struct Planned {
        var file: FoundFile
        var sha256: String?
    }

    /// A copy of content the rule took: nothing is sent for it. `waitsOn` is the upload it
    /// waits on, or the index in `planned` of one queued in this batch.
    struct Copy {
        var file: FoundFile
        var sha256: String
        var original: LocalPath
        var waitsOn: WaitsOn?

        enum WaitsOn {
            case row(Int64)
            case planned(Int)
        }
    }

    /// What becomes of a new version of a file at a path the rule took before.
    enum Revision {
        /// Its upload waits and never started: the row takes the new version, and copies of
        /// what the file was no longer wait on it.
        case waitingUpload(FoundFile, transferID: Int64)
        /// Still the rule's as recorded (its upload runs and sees the change itself, or it
        /// has the content that was sent): the record follows.
        case record(FoundFile, sha256: String?)
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
        let records = try store.takenRecords(rule: id, paths: files.map(\.path))
        var revisions: [Revision] = []
        var fresh: [FoundFile] = []
        for file in files {
            guard let record = records[file.path] else {
                fresh.append(file)
                continue
            }
            if record.file.fingerprint == file.fingerprint { continue }
            if let revision = revise(record, as: file, rule: id) { revisions.append(revision) } else { fresh.append(file) }
        }
        var memory = ContentMemory(taken: try store.takenContent(rule: id, sizes: Set(fresh.map(\.fingerprint.size))))
        var planned: [Planned] = []
        var copies: [Copy] = []
        for file in fresh {
            if let copy = sameContent(as: file, memory: &memory, planned: &planned) {
                copies.append(copy)
            } else {
                planned.append(Planned(file: file, sha256: memory.hashed[file.path]))
            }
        }
        guard !planned.isEmpty || !copies.isEmpty || !revisions.isEmpty else { return }
        let items = planned.map { Intake.PlannedUpload(file: $0.file.path, remotePath: remotePath(for: $0.file, rule: run.rule), takenNote: $0.file.takenAsItIs,
                                                                about: $0.file.fingerprint) }
        // The account went away meanwhile (`account remove`): the rule waits for one, and
        // these files, not recorded, are found again when it runs.
        guard let account = try store.account(id: run.account.id) else {
            stopForMissingAccount(id)
            return
        }
        var queued: [(LocalPath, String)] = []
        var refused: [(LocalPath, String)] = []
        var released: [LocalPath] = []
        let written: Bool = try store.database.transaction(durable: true) {
            // Removed meanwhile (`watch remove`): nothing is queued for it.
            guard try store.watchMemory(rule: id) != nil else { return false }
            queued = []
            refused = []
            released = []
            for (path, sha256) in memory.learnt { try store.setTakenSHA256(rule: id, path: path, sha256: sha256) }
            for revision in revisions { released += try apply(revision, rule: run.rule, store: store) }
            let outcomes = try Intake.enqueuePlanned(items, account: account, origin: .auto, watchRule: id, store: store)
            var records: [TakenFile] = []
            var rows: [Int64?] = []
            for ((entry, item), outcome) in zip(zip(planned, items), outcomes) {
                switch outcome {
                case .success(let queuedAs):
                    queued.append((entry.file.path, item.remotePath))
                    rows.append(queuedAs.id)
                    // A file that changed since it settled is recorded as it is queued.
                    let sha = queuedAs.fingerprint == entry.file.fingerprint ? entry.sha256 : nil
                    records.append(TakenFile(path: entry.file.path, fingerprint: queuedAs.fingerprint, kind: .upload, sha256: sha,
                                             transferID: queuedAs.id))
                    if queuedAs.fingerprint != entry.file.fingerprint { run.memory.taken.insert(queuedAs.fingerprint, at: entry.file.path) }
                case .failure(let refusal):
                    rows.append(nil)
                    refused.append((entry.file.path, refusal.problem))
                }
            }
            for copy in copies {
                var waitsOn: Int64?
                switch copy.waitsOn {
                case .row(let id): waitsOn = id
                case .planned(let index):
                    guard let row = rows[index] else {
                        refused.append((copy.file.path, "the same content as \(copy.original.display), which could not be queued either"))
                        continue
                    }
                    waitsOn = row
                case nil: break
                }
                records.append(TakenFile(path: copy.file.path, fingerprint: copy.file.fingerprint, kind: .duplicate, sha256: copy.sha256,
                                         waitsOn: waitsOn))
            }
            return try store.recordTaken(rule: id, records)
        }
        guard written else { return }
        statusDirty.insert(id)
        for copy in copies where !refused.contains(where: { $0.0 == copy.file.path }) {
            if copy.waitsOn == nil {
                Log.info("\(copy.file.path.display): the same content as \(copy.original.display), which rule \(id) already sent; not sent again")
            } else {
                waitingCopies.insert(id)
                Log.info("\(copy.file.path.display): the same content as \(copy.original.display), whose upload has not completed; sent only if that one fails, goes away or sends another version")
            }
        }
        if !released.isEmpty {
            Log.info("rule \(id): \(released.count == 1 ? released[0].display : "\(released.count) copies") waited on an upload whose file changed before it started; "
                     + "taken again, \(released.count == 1 ? "it is" : "they are") sent unless the same content is on its way already")
            for path in released { run.memory.taken.remove(path) }
            run.watcher.reconsider(released)
        }
        for (path, _) in queued { unqueued[id]?[path] = nil }
        for revision in revisions {
            if case .waitingUpload(let file, _) = revision { unqueued[id]?[file.path] = nil }
        }
        for (path, reason) in refused {
            // Gone meanwhile: deleted, and there is nothing to send, or renamed, and the
            // watcher's move for it says where it went.
            guard FileIO.nameExists(path) else {
                if running[id] != nil { vanished[id, default: []].insert(path) }
                continue
            }
            run.memory.taken.remove(path)
            noteUnqueued(id, path, reason)
        }
        if !waitingCopies.isEmpty { retry(after: Self.reconsiderDelay) }
        if let (path, remote) = queued.first {
            Log.info("rule \(id): queued " + (queued.count == 1 ? "\(path.display) -> \(remote)" : "\(queued.count) new files"))
            options.wake()
        }
    }

    /// The remote path of a found file under its rule.
    private func remotePath(for file: FoundFile, rule: WatchRule) -> String {
        RemotePathPlanner.remotePath(for: file.path, capturedAt: file.media?.captureDate ?? .modificationTime(nanoseconds: file.fingerprint.mtimeNanoseconds, reason: nil), rule: rule)
    }

    /// What a new version of a file at a taken path comes to; nil when it is new content
    /// to send like any new file (nothing waits for it, its upload failed because the file
    /// was gone, its row is gone, or its bytes are not the ones sent).
    private func revise(_ record: TakenRecord, as file: FoundFile, rule id: String) -> Revision? {
        switch (record.file.kind, record.upload) {
        case (.upload, .waiting?):
            return .waitingUpload(file, transferID: record.file.transferID ?? 0)
        case (.upload, .started?):
            Log.info("rule \(id): \(file.path.display) changed while its upload runs; that upload sends it as it is once it is still")
            return .record(file, sha256: nil)
        case (.upload, .failed(let code)?) where code != .sourceMissing:
            // `retry` of that upload sends the file as it is then.
            return .record(file, sha256: nil)
        case (.upload, .completed(let sent)?):
            guard let sent = sent ?? record.file.sha256, ContentHash.sha256(of: file.path, expecting: file.fingerprint) == sent else { return nil }
            Log.debug("rule \(id): \(file.path.display) has a new time but the content that was sent; nothing to send")
            return .record(file, sha256: sent)
        case (.duplicate, _):
            guard let known = record.file.sha256, ContentHash.sha256(of: file.path, expecting: file.fingerprint) == known else { return nil }
            return .record(file, sha256: known)
        default:
            return nil
        }
    }

    /// Writes a revision down; returns the copies that waited on the upload for the content
    /// it no longer carries, forgotten, to be taken again.
    private func apply(_ revision: Revision, rule: WatchRule, store: QueueStore) throws -> [LocalPath] {
        switch revision {
        case .waitingUpload(let file, let transferID):
            var released: [LocalPath] = []
            if try store.updateWaitingUpload(transferID, fingerprint: file.fingerprint, remotePath: remotePath(for: file, rule: rule),
                                            takenNote: file.takenAsItIs) {
                Log.info("rule \(rule.id): \(file.path.display) changed while its upload waited; that upload takes it as it is now")
                // Copies of what the file was would wait for an upload that no longer sends
                // it. Taken again, each is sent itself, or waits again if the new version
                // has its content after all (only its time changed).
                released = try store.forgetCopies(rule: rule.id, waitingOn: transferID)
            }
            try store.updateTaken(rule: rule.id, path: file.path, fingerprint: file.fingerprint, sha256: nil)
            return released
        case .record(let file, let sha256):
            try store.updateTaken(rule: rule.id, path: file.path, fingerprint: file.fingerprint, sha256: sha256)
            return []
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
        var taken: [Int64: [TakenRecord]]
        /// Digests of taken files, learnt by hashing them.
        var learnt: [LocalPath: String] = [:]
        /// Digests of the batch's own files.
        var hashed: [LocalPath: String] = [:]
    }

    /// Whether `file` is a copy of content the rule took (or is about to queue in this
    /// batch), and of which. Only files of the same size can match, so nothing is hashed
    /// unless one exists; a file already taken is hashed at most once (its digest is
    /// recorded), and uploads record theirs. Content whose upload failed, went away or
    /// sent other content counts as not taken: this copy is sent instead.
    private func sameContent(as file: FoundFile, memory: inout ContentMemory, planned: inout [Planned]) -> Copy? {
        let size = file.fingerprint.size
        let batch = planned.indices.filter { planned[$0].file.fingerprint.size == size }
        var taken = memory.taken[size] ?? []
        guard !taken.isEmpty || !batch.isEmpty else { return nil }
        guard let mine = ContentHash.sha256(of: file.path, expecting: file.fingerprint) else { return nil }
        memory.hashed[file.path] = mine
        defer { if !taken.isEmpty { memory.taken[size] = taken } }
        for index in taken.indices {
            if taken[index].file.sha256 == nil, let hashed = ContentHash.sha256(of: taken[index].file.path, expecting: taken[index].file.fingerprint) {
                taken[index].file.sha256 = hashed
                memory.learnt[taken[index].file.path] = hashed
            }
            guard taken[index].file.sha256 == mine else { continue }
            let record = taken[index]
            let awaited = record.file.kind == .upload ? record.file.transferID : record.file.waitsOn
            switch record.upload {
            case .completed? where record.file.kind == .duplicate:
                // A copy still waiting on a completed upload: that upload sent another
                // version of its file, and this content is not on the server.
                continue
            case nil, .completed?:
                // Sent (a copy without an upload to wait on is one of content sent).
                return Copy(file: file, sha256: mine, original: record.file.path, waitsOn: nil)
            case .waiting?, .started?:
                return Copy(file: file, sha256: mine, original: record.file.path, waitsOn: awaited.map { .row($0) })
            case .failed?, .gone?:
                continue
            }
        }
        for index in batch {
            if planned[index].sha256 == nil {
                planned[index].sha256 = ContentHash.sha256(of: planned[index].file.path, expecting: planned[index].file.fingerprint)
            }
            if planned[index].sha256 == mine {
                return Copy(file: file, sha256: mine, original: planned[index].file.path, waitsOn: .planned(index))
            }
        }
        return nil
    }
}
