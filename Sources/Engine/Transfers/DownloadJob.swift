import Glibc
import Platform
import Queue
import Transport

/// Fetches one remote file into `Local Drive/`: bytes land in `<name>.part`, which is
/// renamed into place only when whole. A resume continues from the `.part`'s length with
/// `Range` and `If-Range`, so a file that changed on the server starts over instead of
/// being stitched.
final class DownloadJob {
    let transfer: Transfer
    let account: Account
    let store: QueueStore
    let settings: TransferSettings
    let downloads: String
    let cancellation: CancellationFlag
    let dav: WebDAVClient
    var progressed = false

    init(transfer: Transfer, account: Account, credentials: Credentials?, store: QueueStore, settings: TransferSettings,
         downloads: String, cancellation: CancellationFlag) {
        self.transfer = transfer; self.account = account; self.store = store
        self.settings = settings; self.downloads = downloads; self.cancellation = cancellation
        dav = WebDAVClient(root: account.webdavURL, credentials: credentials)
        settings.prepare(dav.session, for: account, cancellation: cancellation)
    }

    func run() -> JobOutcome {
        do {
            return try fetch()
        } catch {
            if cancellation.isCancelled { return .stopped }
            let c = FailureClassifier.classify(error, direction: .download)
            return c.isTransient ? .retry(c, progressed: progressed) : .failed(c.reason)
        }
    }

    private func fetch() throws -> JobOutcome {
        if let finished = try recogniseFinishedFile() { return finished }
        let item = try dav.properties(of: transfer.remotePath)
        if item.isFolder {
            throw Classified(Reason(.notAFile, "folders can't be downloaded as one file: download the files inside it"))
        }
        try FileIO.makeDirectory(downloads, mode: 0o755)

        // The final name is chosen once, before any byte is written, and kept in the row.
        var final = transfer.localPath
        if final.bytes.isEmpty {
            final = try reserveName(for: item)
            try store.setDownloadInfo(transfer.id, localPath: final, bytesTotal: item.size)
        }
        let part = LocalPath(bytes: final.bytes + Array(".part".utf8))

        let fd = try valueOrErrno("open", path: part.display) { part.withCString { open($0, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) } }
        defer { close(fd) }
        var st = stat()
        try valueOrErrno("fstat", path: part.display) { fstat(fd, &st) }
        var offset = Int64(st.st_size)
        // Resume only what we know came from this very version of the file: the row keeps
        // the strong validator the bytes were fetched under (a weak ETag gives none).
        if offset > 0, transfer.etag == nil || transfer.etag != item.rangeValidator {
            offset = 0
        }
        if offset > 0, let size = item.size, offset > size { offset = 0 }
        try store.setDownloadInfo(transfer.id, bytesTotal: item.size, etag: .some(item.rangeValidator))

        // The running hash of what the .part already holds, from the last checkpoint on.
        var sha = RunningSHA256()
        if offset > 0 {
            if let state = transfer.checkpoint.hashState, let restored = RunningSHA256(state: state),
               restored.count == transfer.checkpoint.offset, restored.count <= offset {
                sha = restored
            }
            try FileIO.readBlocks(fd, from: sha.count, length: offset - sha.count, path: part.display) { sha.update($0) }
        }
        try store.checkpoint(transfer.id, offset: offset, hashState: offset > 0 ? sha.state : nil,
                             counters: ResumeCounters(resumedAt: offset), resetAttempts: false)

        let hasher = PipelinedHasher(sha)
        defer { hasher.stop() }
        let recorder = ProgressRecorder(store: store, id: transfer.id, position: offset, interval: settings.progressInterval, next: hasher)
        let result: DownloadResult
        do {
            result = try dav.download(transfer.remotePath, to: fd, from: offset, ifRange: item.rangeValidator, observer: recorder)
        } catch {
            // Keep what arrived as a resume point; the hash is rebuilt from the file next time.
            if recorder.bytesRead > 0 { progressed = true }
            throw error
        }
        progressed = true
        hasher.drain()
        var digest = hasher.sha.hexDigest
        if result.startedOver {
            // The server sent the whole (changed) file: hash it from the start.
            let fresh = RunningSHA256()
            try FileIO.readBlocks(fd, from: 0, length: result.fileSize, path: part.display) { fresh.update($0) }
            digest = fresh.hexDigest
        }
        guard result.isComplete else {
            throw Classified(Reason(.connectionReset, "the server ended the download early"))
        }
        // The version the listing described (same strong ETag) has the size it listed: a body
        // longer than its Content-Length is cut there by HTTP, and must not become the file.
        if let listed = item.size, let etag = item.etag, etag.hasPrefix("\""), result.etag == etag, result.fileSize != listed {
            _ = ftruncate(fd, 0)
            throw ProtocolViolation("the server listed \(transfer.remotePath) as \(listed) bytes and sent \(result.fileSize) under the same ETag")
        }
        if let theirs = item.sha256?.lowercased(), !result.startedOver, theirs != digest {
            _ = part.withCString { unlink($0) }
            try store.restartFromZero(transfer.id, note: nil)
            throw Classified(Reason(.integrity, "the downloaded bytes do not match the server's checksum; the partial file was removed"))
        }
        fsync(fd)
        // Recorded before the file moves, so that an agent killed after the move knows it.
        try store.recordDownloadedFile(transfer.id, sha256: digest, bytes: result.fileSize)

        // Into place, never over a file that appeared meanwhile: link() refuses an existing
        // name atomically, where rename() would replace it. The row names each candidate
        // before the link, so whatever name the file ends up with is the one recorded.
        var destination = final
        while true {
            let failure: Int32 = part.withCString { from in destination.withCString { to in link(from, to) == 0 ? 0 : errno } }
            if failure == 0 { break }
            guard failure == EEXIST else { throw SystemError("link", errno: failure, path: destination.display) }
            let next = LocalPath(downloads).appending(try chooseName(for: item))
            guard next != destination else { throw SystemError("link", errno: failure, path: destination.display) }
            destination = next
            try store.setDownloadInfo(transfer.id, localPath: destination)
        }
        CrashWindow.downloadInPlace.pauseIfTesting(transfer: transfer.id, cancellation: cancellation)
        _ = part.withCString { unlink($0) }
        return .completed(sha256: digest, bytes: result.fileSize)
    }

    /// An agent killed between moving the file into place and completing the row left the
    /// file under its recorded name: recognised by its size and SHA-256, it completes the
    /// row without a byte fetched again, and no second copy appears.
    private func recogniseFinishedFile() throws -> JobOutcome? {
        guard let expected = transfer.sha256, !transfer.localPath.bytes.isEmpty else { return nil }
        let path = transfer.localPath
        let fd = path.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, FileKind.of(mode: st.st_mode) == .regular, Int64(st.st_size) == transfer.bytesTotal else { return nil }
        let sha = RunningSHA256()
        try FileIO.readBlocks(fd, from: 0, length: Int64(st.st_size), path: path.display) { sha.update($0) }
        guard sha.hexDigest == expected else { return nil }
        Self.removePartial(of: transfer)
        Log.info("download \(transfer.id): \(path.display) is already in place from an earlier run")
        return .completed(sha256: expected, bytes: Int64(st.st_size))
    }

    /// Chooses the final name and claims it at once by creating its `.part` exclusively, so
    /// two downloads of the same name never pick the same file.
    private func reserveName(for item: RemoteItem) throws -> LocalPath {
        for _ in 0..<1000 {
            let candidate = LocalPath(downloads).appending(try chooseName(for: item))
            let part = LocalPath(bytes: candidate.bytes + Array(".part".utf8))
            let fd = part.withCString { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
            if fd >= 0 { close(fd); return candidate }
            guard errno == EEXIST else { throw SystemError("open", path: part.display) }
        }
        throw Classified(Reason(.localWrite, "no free name for \(item.name) in \(downloads)"))
    }

    /// A safe, free name in the download folder: sanitised, with `(1)` when taken.
    private func chooseName(for item: RemoteItem) throws -> String {
        let preferred = DownloadName.sanitize(item.name.isEmpty ? String(transfer.remotePath.split(separator: "/").last ?? "") : item.name)
        return DownloadName.available(in: downloads, preferred: preferred) { path in access(path, F_OK) == 0 }
    }

    static func removePartial(of row: Transfer) {
        guard !row.localPath.bytes.isEmpty else { return }
        let part = LocalPath(bytes: row.localPath.bytes + Array(".part".utf8))
        _ = part.withCString { unlink($0) }
    }
}
