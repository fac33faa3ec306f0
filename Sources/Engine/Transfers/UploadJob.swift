import Foundation
import Glibc
import Platform
import Queue
import Transport

/// Sends one queued file with tus, resuming from wherever the server stands.
///
/// Runs on its own thread with its own queue connection. The policy, in order:
/// the fingerprint is checked before every chunk; an existing upload is always asked
/// for its offset (HEAD) before anything is sent; only 404/410 on that HEAD starts a new
/// upload; after each chunk the server confirms, one row update stores offset and hash.
final class UploadJob {
    let transfer: Transfer
    let account: Account
    let store: QueueStore
    let tus: TusClient
    let settings: TransferSettings
    let serverInfo: ServerInfoCache
    let cancellation: CancellationFlag
    let credentials: Credentials?

    var counters = ResumeCounters()
    var progressed = false

    init(transfer: Transfer, account: Account, credentials: Credentials?, store: QueueStore,
         settings: TransferSettings, serverInfo: ServerInfoCache, cancellation: CancellationFlag) {
        self.transfer = transfer
        self.account = account
        self.store = store
        self.settings = settings
        self.serverInfo = serverInfo
        self.cancellation = cancellation
        self.credentials = credentials
        tus = TusClient(endpoint: account.tusURL, credentials: credentials)
        settings.prepare(tus.session, for: account, cancellation: cancellation)
    }

    func run() -> JobOutcome {
        do {
            return try send()
        } catch {
            if cancellation.isCancelled { return .stopped }
            let c = FailureClassifier.classify(error, direction: .upload)
            if c.reason.code == .uploadLost || c.reason.code == .uploadExpired {
                // The server forgot the upload: the next attempt creates a new one at once.
                try? store.restartFromZero(transfer.id, note: c.reason)
                return .retry(Classification(reason: c.reason, retryAfter: 0), progressed: true)
            }
            return c.isTransient ? .retry(c, progressed: progressed) : .failed(c.reason)
        }
    }

    private func send() throws -> JobOutcome {
        let path = transfer.localPath
        let fd = try valueOrErrno("open", path: path.display) { path.withCString { open($0, O_RDONLY | O_CLOEXEC) } }
        defer { close(fd) }
        var st = stat()
        try valueOrErrno("fstat", path: path.display) { fstat(fd, &st) }
        guard FileKind.of(mode: st.st_mode) == .regular else { throw Classified(Reason(.notAFile, "\(path.display) is not a regular file")) }
        let fingerprint = try FileFingerprint.of(descriptor: fd)
        var row = transfer
        if let recorded = row.fingerprint, recorded != fingerprint {
            // Changed since it was queued or since the last attempt: never stitch it into the old upload.
            try startOver(row, because: Reason(.sourceChanged), fingerprint: fingerprint)
            row.uploadURL = nil
            row.checkpoint = Checkpoint()
        }
        let size = fingerprint.size

        let info = try serverInfo.info(for: account.tusURL) { try tus.discover() }
        if let max = info.maxSize, size > max {
            throw Classified(Reason(.tooLarge, "the file is \(size) bytes; the server accepts at most \(max)"))
        }

        // Where do we stand?
        var offset: Int64 = 0
        var url = row.uploadURL
        if url != nil, let expires = row.uploadExpiresAt, expires < nowMilliseconds() {
            // The server said it would forget this upload by now: don't send into the void.
            Log.info("upload \(transfer.id): the partial upload expired on the server; starting a new one")
            try store.restartFromZero(transfer.id, note: Reason(.uploadExpired))
            url = nil
        }
        if let existing = url {
            do {
                let status = try tus.status(of: existing, confirmed: row.checkpoint.offset)
                if let length = status.length, length != size {
                    try startOver(row, because: Reason(.sourceChanged), fingerprint: fingerprint)
                    url = nil
                } else {
                    offset = status.offset
                }
            } catch let e as HTTPStatusError where e.status == 404 || e.status == 410 {
                let note = Reason(e.status == 410 ? .uploadExpired : .uploadLost)
                Log.info("upload \(transfer.id): the server no longer has the partial upload (\(e.status)); starting a new one")
                try store.restartFromZero(transfer.id, note: note)
                url = nil
            }
        }
        if url == nil {
            let created = try tus.create(length: size, metadata: metadata(for: row))
            url = created.url
            offset = 0
            try store.setUpload(transfer.id, url: created.url, expiresAt: created.expiresAt)
            row.checkpoint = Checkpoint()
        }
        guard let uploadURL = url else { throw ProtocolViolation("no upload address") }

        // Bring the running hash to the server's offset, reading only what it lacks.
        let hasher = ChunkedHasher(try catchUpHash(fd: fd, checkpoint: url == row.uploadURL ? row.checkpoint : Checkpoint(), to: offset))
        counters = ResumeCounters(resumedAt: offset, bytesRead: counters.bytesRead, bytesHashed: counters.bytesHashed)
        try store.checkpoint(transfer.id, offset: offset, hashState: hasher.state, counters: counters, resetAttempts: false)

        // With per-chunk checksums each chunk is read once into memory, digested, and sent
        // from there: the file is still read only once. The buffer is bounded, whatever
        // the file's size.
        let checksum = info.checksumAlgorithm
        // Streamed chunks adapt to the link: each aims to take about `chunkSeconds`, so a
        // fast link is not slowed by many small requests and a slow one never has much to
        // resend. Buffered (checksummed) chunks stay small: they live in memory.
        var chunkSize = checksum == nil ? settings.chunkSize : min(settings.chunkSize, Self.bufferedChunkLimit)
        let chunkBuffer = checksum == nil ? nil : UnsafeMutableRawBufferPointer.allocate(byteCount: Int(min(chunkSize, size)), alignment: 64)
        defer { chunkBuffer?.deallocate() }
        while offset < size {
            if cancellation.isCancelled { return .stopped }
            if try FileFingerprint.of(path) != fingerprint || FileFingerprint.of(descriptor: fd) != fingerprint {
                try? tus.terminate(uploadURL)
                try startOver(row, because: Reason(.sourceChanged), fingerprint: nil)
                throw Classified(Reason(.sourceChanged), retryAfter: 0)
            }
            var length = min(chunkSize, size - offset)
            if offset + length == size, length > 1 {
                // Hold the last byte back: the upload completes only after one more look at
                // the file, so a file changed during its last chunk is never finished stale.
                length -= 1
            }
            let recorder = ProgressRecorder(store: store, id: transfer.id, position: offset, interval: settings.progressInterval, next: hasher)
            let sentFrom = offset
            let began = monotonicSeconds()
            let result: (offset: Int64, expiresAt: Int64?)
            if let checksum, let chunkBuffer {
                let chunk = UnsafeRawBufferPointer(rebasing: chunkBuffer[0..<Int(length)])
                try readExactly(fd: fd, offset: offset, into: UnsafeMutableRawBufferPointer(mutating: chunk))
                counters.bytesRead += length
                let digest = ChunkDigest(checksum)
                digest.update(chunk)
                result = try tus.patch(url: uploadURL, offset: offset, bytes: chunk, observer: recorder, checksum: (checksum, digest.base64))
            } else {
                result = try tus.patch(url: uploadURL, descriptor: fd, offset: offset, length: length, observer: recorder)
                counters.bytesRead += recorder.bytesRead
            }
            counters.bytesHashed += recorder.bytesRead
            offset = result.offset
            if offset != sentFrom + length {
                // The server kept less than we sent: rewind the hash to what it confirmed.
                let rewound = try catchUpHash(fd: fd, checkpoint: Checkpoint(offset: sentFrom, hashState: hasher.savedBeforeChunk), to: offset)
                hasher.replace(with: rewound)
            }
            if offset > sentFrom { progressed = true }
            if checksum == nil, length == chunkSize {
                chunkSize = ChunkSizing.next(after: chunkSize, took: monotonicSeconds() - began, settings: settings)
            }
            try store.checkpoint(transfer.id, offset: offset, hashState: hasher.state, counters: counters, resetAttempts: offset > sentFrom)
            hasher.markChunkStart()
        }
        let digest = hasher.hexDigest
        try verifyOnServer(row, digest: digest)
        return .completed(sha256: digest, bytes: size)
    }

    /// Where the server reports a checksum of what it stored, compare it with ours. The
    /// server may have stored the file as `name (1).ext` when a different file already had
    /// the name, so a mismatch looks at the numbered siblings before it calls it damage.
    private func verifyOnServer(_ row: Transfer, digest: String) throws {
        let dav = WebDAVClient(root: account.webdavURL, credentials: credentials)
        settings.prepare(dav.session, for: account, cancellation: cancellation)
        let item: RemoteItem
        do { item = try dav.properties(of: row.remotePath) } catch {
            Log.debug("upload \(row.id): could not ask the server for its checksum (\(error)); trusting the tus offsets")
            return
        }
        guard let theirs = item.sha256?.lowercased() else { return }
        if theirs == digest { return }
        let name = String(row.remotePath.split(separator: "/").last ?? "")
        let stem = name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
        if let siblings = try? dav.list(row.remoteFolder),
           let ours = siblings.first(where: { $0.name.hasPrefix(stem + " (") && $0.sha256?.lowercased() == digest }) {
            try store.setRemotePath(row.id, ours.path)
            Log.info("upload \(row.id): a different file already had the name; the server stored this one as \(ours.path)")
            return
        }
        throw Classified(Reason(.integrity, "the server's copy does not match the file (SHA-256 \(theirs.prefix(12))… instead of \(digest.prefix(12))…)"))
    }

    private func metadata(for row: Transfer) -> [(String, String)] {
        let name = row.remotePath.split(separator: "/").last.map(String.init) ?? row.localPath.lastComponent.text
        return [("filename", name), ("filetype", MediaType.guess(name)), ("path", String(row.remotePath.drop(while: { $0 == "/" })))]
    }

    private func startOver(_ row: Transfer, because note: Reason, fingerprint: FileFingerprint?) throws {
        if let old = row.uploadURL { try? tus.terminate(old) }
        try store.restartFromZero(row.id, note: note, fingerprint: fingerprint, bytesTotal: fingerprint?.size)
        Log.info("upload \(row.id): \(note.message)")
    }

    /// A hasher covering bytes [0, target), built from `checkpoint` plus a read of the gap.
    private func catchUpHash(fd: Int32, checkpoint: Checkpoint, to target: Int64) throws -> RunningSHA256 {
        var start: Int64 = 0
        var sha = RunningSHA256()
        if let state = checkpoint.hashState, let restored = RunningSHA256(state: state), restored.count == checkpoint.offset,
           checkpoint.offset <= target {
            sha = restored
            start = checkpoint.offset
        }
        if target > start {
            try readRange(fd: fd, offset: start, length: target - start) { sha.update($0) }
            counters.bytesRead += target - start
            counters.bytesHashed += target - start
        }
        return sha
    }

    /// The largest chunk held in memory when the server checks chunk checksums.
    static let bufferedChunkLimit: Int64 = 8 * 1024 * 1024

    private func readExactly(fd: Int32, offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws {
        var done = 0
        while done < buffer.count {
            let n = try valueOrErrno("read", path: transfer.localPath.display) {
                pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
            }
            if n == 0 { throw Classified(Reason(.sourceChanged), retryAfter: 0) }
            done += n
        }
    }

    private func readRange(fd: Int32, offset: Int64, length: Int64, _ body: (UnsafeRawBufferPointer) -> Void) throws {
        let bufferSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var done: Int64 = 0
        while done < length {
            if cancellation.isCancelled { throw TransportError(kind: .cancelled, message: "cancelled") }
            let want = Int(min(Int64(bufferSize), length - done))
            let n = try valueOrErrno("read", path: transfer.localPath.display) { pread(fd, buffer.baseAddress!, want, off_t(offset + done)) }
            if n == 0 { throw Classified(Reason(.sourceChanged), retryAfter: 0) }
            body(UnsafeRawBufferPointer(start: buffer.baseAddress!, count: n))
            done += Int64(n)
        }
    }
}

/// The running SHA-256 plus the state it had when the current chunk began, so a chunk the
/// server only partly kept can be rewound. Hashing runs on its own thread, overlapping
/// with the send; every read of the state waits for it to catch up.
final class ChunkedHasher: ByteObserver {
    private let pipeline: PipelinedHasher
    private(set) var savedBeforeChunk: [UInt8]

    init(_ sha: RunningSHA256) {
        pipeline = PipelinedHasher(sha)
        savedBeforeChunk = sha.state
    }

    deinit { pipeline.stop() }

    func observe(_ bytes: UnsafeRawBufferPointer) { pipeline.observe(bytes) }
    func markChunkStart() { savedBeforeChunk = state }
    func replace(with sha: RunningSHA256) {
        pipeline.replace(sha)
        savedBeforeChunk = state
    }
    var sha: RunningSHA256 { pipeline.drain(); return pipeline.sha }
    var state: [UInt8] { sha.state }
    var hexDigest: String { sha.hexDigest }
}
