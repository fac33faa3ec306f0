import Platform
import Queue
import Transport

/// Sending: chunk after chunk from the server's offset, the file checked before each, one
/// checkpoint `(offset, SHA-256 state)` per chunk the server confirmed, the running hash
/// brought along so that a resume reads only what the server lacks.
extension UploadJob {
    enum SendResult {
        /// Every byte is on the server; the whole file's SHA-256.
        case sent(sha256: String)
        /// Stopped before the end (cancelled, or the file changed): the attempt ends so.
        case stopped(JobOutcome)
        /// tus only: just before the chunk that would make the file, the name held what that
        /// chunk must not replace (another file, or another version than the one this
        /// replaces). Nothing was replaced; the upload cannot be made under another name.
        case nameTaken
    }

    /// The largest checksummed chunk read once into memory, digested and sent from there;
    /// a larger one is read twice, once for its digest and again as it is sent, so that
    /// memory stays flat whatever the chunk's size (three uploads at once of 8 MiB photos
    /// held in memory took the agent to 43 MB). One thread's scratch buffer.
    static let heldChunkLimit = Int64(ThreadScratch.limit)

    /// The largest checksummed chunk. Checksummed chunks keep to the size set rather than
    /// adapt to the link: past `heldChunkLimit` each is read twice, and a digest the server
    /// finds wrong (tus's 460) has the whole chunk sent again.
    static let checksummedChunkLimit: Int64 = 8 << 20

    func sendRest(of source: SourceFile, row: inout Transfer, from start: Int64,
                  capabilities: UploadCapabilities) throws -> SendResult {
        guard let handle = row.uploadURL else { throw ProtocolViolation("no upload to send to") }
        let size = source.size
        let target = target(row, source)
        var offset = start

        // Bring the running hash to the server's offset, reading only what it lacks.
        let hasher = ChunkedHasher(try catchUpHash(source, checkpoint: row.checkpoint, to: offset))
        counters = ResumeCounters(resumedAt: offset, bytesRead: counters.bytesRead, bytesHashed: counters.bytesHashed)
        if offset > 0 || row.checkpoint != Checkpoint() {
            // A new upload's row already says nothing is confirmed (`startedUpload`).
            try store.checkpoint(row.id, offset: offset, hashState: hasher.state, counters: counters, resetAttempts: false)
            row.checkpoint = Checkpoint(offset: offset, hashState: hasher.state)
        }

        // Streamed chunks adapt to the link: each aims to take about `chunkSeconds`, so a
        // fast link is not slowed by many small requests and a slow one never has much to
        // resend; checksummed ones keep to their size (`checksummedChunkLimit`). Whatever the
        // link, a chunk stays within the server's bounds (Nextcloud: at least 5 MiB but the
        // last, at most 10,000 of them).
        let checksum = capabilities.chunkChecksum
        let bounds = ChunkSizing.bounds(for: capabilities, size: size)
        var chunkSize = checksum == nil ? settings.chunkSize : min(settings.chunkSize, Self.checksummedChunkLimit)
        chunkSize = min(max(chunkSize, bounds.lowerBound), bounds.upperBound)
        if capabilities.wholeFileOnly { chunkSize = max(size, 1) }

        while offset < size {
            if cancellation.isCancelled { return .stopped(.stopped) }
            if try !source.isUnchanged() {
                // Never stitched into the old upload: the next attempt decides, once the
                // file has been still for a while, to start it again.
                Log.info("upload \(row.id): the file changed while it was sent")
                return .stopped(.retry(Classification(reason: stillBeingWritten, retryAfter: settings.settleSeconds), progressed: progressed))
            }
            var length = min(chunkSize, size - offset)
            /// tus's one-byte chunk that makes the file, read before it is sent.
            var finalByte: [UInt8]?
            /// This send makes the file (a direct PUT of the whole file).
            var makesFile = false
            switch capabilities.finalStep {
            case .lastChunk where offset + length == size:
                if length > 1 {
                    // Hold the last byte back: the upload completes only after one more look at
                    // the file and at the target, so a file changed during its last chunk is
                    // never finished stale, and the look at the target is as late as can be.
                    length -= 1
                } else {
                    guard try targetAllowsTheLastChunk(row) else { return .nameTaken }
                    // The whole file's digest is recorded before that byte goes: it is read
                    // once, hashed into a copy of the running hash, and sent from memory.
                    var byte = [UInt8](repeating: 0, count: Int(length))
                    try byte.withUnsafeMutableBytes { try source.read(into: $0, at: offset) }
                    guard let whole = RunningSHA256(state: hasher.state) else { throw ProtocolViolation("the running hash state is damaged") }
                    byte.withUnsafeBytes { whole.update($0) }
                    try recordFinishing(&row, size: size, sha256: whole.hexDigest)
                    finalByte = byte
                }
            case .wholeFileSend:
                // This PUT makes the file: recorded just before it goes, with its digest where
                // the body is read for its checksum first.
                makesFile = true
            default:
                break
            }
            // The whole file in one checksummed request: its checksum is the file's SHA-256,
            // so the running hash takes that state once the server has them all (rather than
            // hashing them once more as they are sent).
            let wholeFileChecksummed = finalByte == nil && checksum == .sha256 && offset == 0 && length == size
            let recorder = ProgressRecorder(progress: settings.progress, position: offset, next: wholeFileChecksummed ? nil : hasher)
            let sentFrom = offset
            let began = MonotonicClock.seconds()
            let confirmed: UploadStanding.Confirmed
            if let finalByte {
                counters.bytesRead += length
                let digest = checksum.map { algorithm in
                    let d = ChunkDigest(algorithm)
                    finalByte.withUnsafeBytes { d.update($0) }
                    return (algorithm, d.base64)
                }
                confirmed = try finalByte.withUnsafeBytes {
                    try upload.send(.buffer($0, observer: recorder), to: handle, at: offset, of: target, checksum: digest)
                }
            } else if let checksum {
                // The request's head carries the chunk's digest, so the chunk is read before it
                // is sent: a small one once, into memory, and sent from there; a larger one
                // twice, the second time as it is sent (`heldChunkLimit`).
                let held = length <= Self.heldChunkLimit ? ThreadScratch.lend(byteCount: Int(length)) : nil
                defer { if let held { ThreadScratch.giveBack(held) } }
                if let held { try source.read(into: held, at: offset) }
                counters.bytesRead += length
                func digest(_ update: (UnsafeRawBufferPointer) -> Void) throws {
                    if let held { update(UnsafeRawBufferPointer(held)) } else { try source.readBlocks(from: offset, length: length, update) }
                }
                let body: RequestBody = held.map { .buffer(UnsafeRawBufferPointer($0), observer: recorder) }
                    ?? .file(descriptor: source.fd, offset: offset, length: length, observer: recorder)
                if wholeFileChecksummed {
                    let whole = RunningSHA256()
                    try digest { whole.update($0) }
                    let sha256 = whole.digest
                    if makesFile {
                        // Nextcloud keeps the SHA-256 sent with a file and reports it in its
                        // listings, so a new file there needs no flush to the disk before the
                        // request: if a power cut takes the record back, the next attempt's look
                        // at the target finds this file with this content and completes. A new
                        // version stays durable (the next attempt would take its own version for
                        // someone else's), and so does every file elsewhere.
                        let recognisable = row.replaceable == nil && account.server.kind == .nextcloud
                        try recordFinishing(&row, size: size, sha256: whole.hexDigest, durable: !recognisable)
                    }
                    // The running hash takes `whole`'s state, so what is sent must be what was
                    // hashed: the one protocol that sends a whole file under its checksum, a
                    // Nextcloud PUT, seals a streamed body with it (`BodySeal`).
                    confirmed = try upload.send(body, to: handle, at: offset, of: target, checksum: (checksum, ChunkDigest.base64(sha256)))
                    if confirmed.offset == size { hasher.replace(with: whole) }
                } else {
                    // The running hash takes the bytes as they are sent; the server checks
                    // them against the digest (tus: 460 when they differ).
                    let chunkDigest = ChunkDigest(checksum)
                    try digest { chunkDigest.update($0) }
                    if makesFile {
                        try recordFinishing(&row, size: size, sha256: checksum == .sha256 ? chunkDigest.hex : nil)
                    }
                    confirmed = try upload.send(body, to: handle, at: offset, of: target, checksum: (checksum, chunkDigest.base64))
                }
                if held == nil { counters.bytesRead += recorder.bytesRead }
            } else {
                // Its digest is known only once it has been read.
                if makesFile { try recordFinishing(&row, size: size, sha256: nil) }
                confirmed = try upload.send(.file(descriptor: source.fd, offset: offset, length: length, observer: recorder),
                                            to: handle, at: offset, of: target, checksum: nil)
                counters.bytesRead += recorder.bytesRead
            }
            counters.bytesHashed += recorder.bytesRead
            offset = confirmed.offset
            if offset == size {
                CrashWindow.uploadConfirmed.pauseIfTesting(transfer: row.id, cancellation: cancellation)
            }
            if offset != sentFrom + length {
                // The server kept less than we sent: rewind the hash to what it confirmed.
                let rewound = try catchUpHash(source, checkpoint: Checkpoint(offset: sentFrom, hashState: hasher.savedBeforeChunk), to: offset)
                hasher.replace(with: rewound)
            }
            if offset > sentFrom { progressed = true }
            if checksum == nil, length == chunkSize {
                chunkSize = ChunkSizing.next(after: chunkSize, took: MonotonicClock.seconds() - began, settings: settings, within: bounds)
            }
            if let expiresAt = confirmed.expiresAt, expiresAt != row.uploadExpiresAt {
                try store.setUpload(row.id, url: handle, expiresAt: expiresAt)
                row.uploadExpiresAt = expiresAt
            }
            if !(makesFile && offset == size) {
                // A PUT that made the whole file needs no resume point: the row records that
                // file (`recordFinishing`), and the completion takes the counters.
                try store.checkpoint(row.id, offset: offset, hashState: hasher.state, counters: counters, resetAttempts: offset > sentFrom)
            }
            row.checkpoint = Checkpoint(offset: offset, hashState: hasher.state)
            hasher.markChunkStart()
        }
        return .sent(sha256: hasher.hexDigest)
    }

    /// A hasher covering bytes [0, target), built from `checkpoint` plus a read of the gap.
    func catchUpHash(_ source: SourceFile, checkpoint: Checkpoint, to target: Int64) throws -> RunningSHA256 {
        var start: Int64 = 0
        var sha = RunningSHA256()
        if let state = checkpoint.hashState, let restored = RunningSHA256(state: state), restored.count == checkpoint.offset,
           checkpoint.offset <= target {
            sha = restored
            start = checkpoint.offset
        }
        try hash(source, from: start, to: target, into: sha)
        return sha
    }

    /// The SHA-256 of the whole file, read once (to compare with a file already on the server).
    func wholeFileDigest(_ source: SourceFile) throws -> String {
        let sha = RunningSHA256()
        try hash(source, from: 0, to: source.size, into: sha)
        return sha.hexDigest
    }

    private func hash(_ source: SourceFile, from start: Int64, to end: Int64, into sha: RunningSHA256) throws {
        guard end > start else { return }
        try source.readBlocks(from: start, length: end - start) { block in
            if cancellation.isCancelled { throw TransportError(kind: .cancelled, message: "cancelled") }
            sha.update(block)
        }
        counters.bytesRead += end - start
        counters.bytesHashed += end - start
    }
}
