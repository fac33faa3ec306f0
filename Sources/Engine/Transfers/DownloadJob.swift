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
            try hashFile(fd, from: sha.count, to: offset, into: sha)
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
            try hashFile(fd, from: 0, to: result.fileSize, into: fresh)
            digest = fresh.hexDigest
        }
        guard result.isComplete else {
            throw Classified(Reason(.connectionReset, "the server ended the download early"))
        }
        if let theirs = item.sha256?.lowercased(), !result.startedOver, theirs != digest {
            _ = part.withCString { unlink($0) }
            try store.restartFromZero(transfer.id, note: nil)
            throw Classified(Reason(.integrity, "the downloaded bytes do not match the server's checksum; the partial file was removed"))
        }
        fsync(fd)

        // Into place, never over a file that appeared meanwhile: link() refuses an existing
        // name atomically, where rename() would replace it.
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
        _ = part.withCString { unlink($0) }
        return .completed(sha256: digest, bytes: result.fileSize)
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

    private func hashFile(_ fd: Int32, from start: Int64, to end: Int64, into sha: RunningSHA256) throws {
        let size = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        var position = start
        while position < end {
            let n = try valueOrErrno("read") { pread(fd, buffer.baseAddress!, Int(min(Int64(size), end - position)), off_t(position)) }
            if n == 0 { break }
            sha.update(UnsafeRawBufferPointer(start: buffer.baseAddress, count: n))
            position += Int64(n)
        }
    }

    static func removePartial(of row: Transfer) {
        guard !row.localPath.bytes.isEmpty else { return }
        let part = LocalPath(bytes: row.localPath.bytes + Array(".part".utf8))
        _ = part.withCString { unlink($0) }
    }
}
