import Glibc
import Platform
import Queue
import Transport

/// Fetches one remote file into `Local Drive/`: bytes land in `<name>.part`, which goes
/// into place only when whole. A resume continues from the `.part`'s length with `Range`
/// and `If-Range`, so a file that changed on the server starts over instead of being
/// stitched; a server that answers the resume with the whole file (`200`) has it written
/// from byte 0, with the hash started again.
///
/// Every call on the file is checked (through `Platform`'s wrappers): a download whose
/// bytes the disk did not take (a failed `fsync` or `close`) fails as `local_write`, and
/// is never completed.
final class DownloadJob {
    let transfer: Transfer
    let account: Account
    let store: QueueStore
    let settings: TransferSettings
    let downloads: String
    let cancellation: CancellationFlag
    /// Told where the file went, and the file as placed, once it is in place (`Agent.Options.onDownloadPlaced`).
    let placed: (@Sendable (LocalPath, FileFingerprint) -> Void)?
    let dav: WebDAVClient
    var progressed = false

    init(transfer: Transfer, account: Account, credentials: Credentials?, store: QueueStore, settings: TransferSettings,
         downloads: String, cancellation: CancellationFlag, placed: (@Sendable (LocalPath, FileFingerprint) -> Void)? = nil) {
        self.transfer = transfer; self.account = account; self.store = store
        self.settings = settings; self.downloads = downloads; self.cancellation = cancellation; self.placed = placed
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
        let part = Self.partPath(of: final)

        let file = try openPart(part)
        let held = try file.size()
        var offset = held
        // Resume only what we know came from this very version of the file: the row keeps
        // the strong validator the bytes were fetched under (a weak ETag gives none).
        if offset > 0, transfer.etag == nil || transfer.etag != item.rangeValidator {
            offset = 0
        }
        if offset > 0, let size = item.size, offset > size { offset = 0 }
        // Bytes of another version go before the row names this one: a kill or a refused
        // write in between would otherwise leave them to be resumed under its validator,
        // the new version's tail stitched onto the old one's head.
        if offset == 0 { try file.truncate(to: 0) }
        try store.setDownloadInfo(transfer.id, bytesTotal: item.size, etag: .some(item.rangeValidator))

        // The running hash of what the .part already holds, from the last checkpoint on.
        var sha = RunningSHA256()
        if offset > 0 {
            if let state = transfer.checkpoint.hashState, let restored = RunningSHA256(state: state),
               restored.count == transfer.checkpoint.offset, restored.count <= offset {
                sha = restored
            }
            try FileIO.readBlocks(file.descriptor, from: sha.count, length: offset - sha.count, path: part.display) { sha.update($0) }
        }
        try store.checkpoint(transfer.id, offset: offset, hashState: offset > 0 ? sha.state : nil,
                             counters: ResumeCounters(resumedAt: offset), resetAttempts: false)

        // Hashed on the transfer's own thread, a written buffer at a time while it is still in
        // the cache: on two cores a hashing thread of its own cost a copy of every byte and a
        // wake-up per buffer, and the download took longer than hashing inline.
        // Counts into memory only; the agent writes the row (no database inside callbacks).
        let recorder = ProgressRecorder(progress: settings.progress, position: offset, next: sha)
        let result: DownloadResult
        do {
            result = try dav.download(transfer.remotePath, to: file.descriptor, from: offset, ifRange: item.rangeValidator,
                                      observer: recorder)
        } catch {
            // What arrived stays as a resume point; the hash is rebuilt from the file next time.
            if recorder.bytesRead > 0 { progressed = true }
            try? forgetCheckpoint(ifStartedOver: recorder, file: file)
            throw error
        }
        progressed = true
        // When the restart cannot be recorded, the new bytes are gone and the job ends here.
        try forgetCheckpoint(ifStartedOver: recorder, file: file)
        // A 200 restarted the hash before its first byte: it covers exactly the file.
        let digest = sha.hexDigest
        guard result.isComplete(listed: item.size) else {
            throw Classified(Reason(.connectionReset, "the server ended the download early"))
        }
        // The version the listing described (same strong ETag) has the size it listed: a body
        // longer than its Content-Length is cut there by HTTP, and must not become the file.
        if let listed = item.size, let etag = item.etag, etag.hasPrefix("\""), result.etag == etag, result.fileSize != listed {
            try file.truncate(to: 0)
            throw ProtocolViolation("the server listed \(transfer.remotePath) as \(listed) bytes and sent \(result.fileSize) under the same ETag")
        }
        if let theirs = try checksum(of: result, listed: item), theirs != digest {
            try file.close()
            try FileIO.unlink(part, ifPresent: true)
            try store.restartFromZero(transfer.id, note: nil)
            throw Classified(Reason(.integrity, "the downloaded bytes do not match the server's checksum; the partial file was removed"))
        }
        // On the disk, or not complete: a failed fsync or close is the only news of lost bytes.
        let written: FileFingerprint
        do {
            try file.sync()
            written = FileFingerprint(try file.status())
            try file.close()
        } catch {
            // After a failed fsync Linux may keep the pages and call them clean: the .part's
            // bytes can no longer be trusted, so a retry starts from nothing.
            discardPartial(part)
            throw error
        }
        // Recorded before the file moves, so that an agent killed after the move knows it;
        // with the file as written (a link or a rename puts that very file in place), so that
        // whatever happens at its name before the row completes is not taken for the download.
        try store.recordDownloadedFile(transfer.id, sha256: digest, bytes: result.fileSize, etag: result.etag ?? item.etag,
                                       placed: written)
        let moved = try moveIntoPlace(part, as: final, item: item)
        if let copy = moved.copy { try store.recordPlacedFile(transfer.id, copy) }
        placed?(moved.path, moved.copy ?? written)
        CrashWindow.downloadInPlace.pauseIfTesting(transfer: transfer.id, cancellation: cancellation)
        if let left = moved.part { try FileIO.unlink(left, ifPresent: true) }
        return .completed(sha256: digest, bytes: result.fileSize)
    }

    /// The checksum the downloaded bytes must have, where the server lists one for their
    /// version. Bytes served under another ETag than the listing's are another version (saved
    /// again since the listing), or the same one on a server whose GET and listing name it
    /// differently: the file is listed again. Unchanged, the bytes are the version listed;
    /// changed, they are the new listing's version only if it names the ETag they came with.
    private func checksum(of result: DownloadResult, listed item: RemoteItem) throws -> String? {
        guard let listed = item.sha256 else { return nil }
        if Self.isListedVersion(result, item) { return listed.lowercased() }
        guard let served = result.etag, let first = item.etag else { return nil }
        let again = try dav.properties(of: transfer.remotePath)
        if let now = again.etag, Replacing.sameVersion(now, first) { return listed.lowercased() }
        guard let now = again.etag, Replacing.sameVersion(now, served) else { return nil }
        return again.sha256?.lowercased()
    }

    /// Whether the bytes downloaded are the version the listing described: served under its
    /// ETag, or, with no ETag on either side to tell, not sent whole again when a resume
    /// was asked for (a 200 to `If-Range` is a new version).
    static func isListedVersion(_ result: DownloadResult, _ item: RemoteItem) -> Bool {
        if let served = result.etag, let listed = item.etag { return Replacing.sameVersion(served, listed) }
        return !result.startedOver
    }

    /// After the server sent the whole file again, the row's checkpoint (the hash of the old
    /// first bytes) must never meet the new ones on a later resume: it is forgotten, or, when
    /// the database refuses that now, the new bytes go instead and the database's error is
    /// thrown (the file they made is gone, so nothing may complete with it).
    private func forgetCheckpoint(ifStartedOver recorder: ProgressRecorder, file: OpenFile) throws {
        guard recorder.startedOver else { return }
        do {
            try store.checkpoint(transfer.id, offset: 0, hashState: nil, counters: ResumeCounters(), resetAttempts: false)
        } catch {
            Log.info("download \(transfer.id): the restart could not be recorded (\(error)); the partial file starts again")
            try file.truncate(to: 0)
            throw error
        }
    }

    /// The `.part` to write into, opened as itself only: a symbolic link put in its place,
    /// or a second name of a file already placed (the hard link an agent killed after the
    /// placing left, which a person may since have edited under its final name), is taken
    /// away, not written through, and the bytes start again in a new `.part`.
    private func openPart(_ part: LocalPath) throws -> OpenFile {
        do throws(SystemError) {
            let file = try OpenFile(part, O_RDWR | O_NOFOLLOW)
            let st = try file.status()
            if FileKind.of(mode: st.st_mode) == .regular, st.st_nlink == 1 { return file }
            try file.close()
            Log.info("download \(transfer.id): \(part.display) is not a partial file of its own; starting a new one")
        } catch {
            guard [ENOENT, ELOOP].contains(error.errno) else { throw error }
        }
        try FileIO.unlink(part, ifPresent: true)
        return try OpenFile(part, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o644)
    }

    /// Removes the `.part` and the row's resume point; failures are logged (the job is
    /// failing already).
    private func discardPartial(_ part: LocalPath) {
        do { try FileIO.unlink(part, ifPresent: true) } catch {
            Log.warning("download \(transfer.id): its partial file could not be removed: \(error)")
        }
        do { try store.restartFromZero(transfer.id, note: nil) } catch {
            Log.warning("download \(transfer.id): its resume point could not be forgotten: \(error)")
        }
    }

    /// How a finished `.part` can become the file on this file system, best first.
    private enum Placement { case link, renameNoReplace, exclusiveCopy }

    /// Puts the whole `.part` under its final name, never over a file that appeared there
    /// meanwhile: `link()` refuses a taken name atomically, where `rename()` would replace
    /// it. Where the file system has no hard links (vfat, exFAT, many FUSE and CIFS mounts:
    /// `EPERM`), `renameat2(RENAME_NOREPLACE)` does the same in one step; where that is not
    /// offered either (`EINVAL`), the name is created exclusively (`O_EXCL`) and the bytes
    /// copied in. A taken name moves on to `name (1).ext`, the row naming each candidate
    /// before it is tried, so whatever name the file gets is the one recorded; the `.part`
    /// goes along (`name (1).ext.part`), so that a restart after a kill finds it by the name
    /// recorded, and removes it.
    ///
    /// `part` is the `.part` still there (linked or copied), nil when it was renamed; `copy`
    /// the file put in place when it is a copy (another file than the one written).
    private func moveIntoPlace(_ part: LocalPath, as final: LocalPath, item: RemoteItem) throws -> (path: LocalPath, part: LocalPath?, copy: FileFingerprint?) {
        var destination = final
        var part = part
        var way = Placement.link
        while true {
            do throws(SystemError) {
                switch way {
                case .link:
                    try FileIO.link(part, to: destination)
                    return (destination, part, nil)
                case .renameNoReplace:
                    try FileIO.renameNoReplace(part, to: destination)
                    return (destination, nil, nil)
                case .exclusiveCopy:
                    return (destination, part, try copyExclusively(part, to: destination))
                }
            } catch {
                switch (way, error.errno) {
                case (_, EEXIST):
                    let next = LocalPath(downloads).appending(try chooseName(for: item))
                    guard next != destination else { throw error }
                    // Its .part taken meanwhile by another download: the next name, then.
                    guard let moved = try movePart(part, along: next) else { continue }
                    part = moved
                    destination = next
                    try store.setDownloadInfo(transfer.id, localPath: destination)
                case (.link, EPERM), (.link, EOPNOTSUPP), (.link, ENOSYS), (.link, EMLINK):
                    Log.debug("download \(transfer.id): no hard links in \(downloads) (\(error.reason)); renaming without replacing")
                    way = .renameNoReplace
                case (.renameNoReplace, EINVAL), (.renameNoReplace, EOPNOTSUPP), (.renameNoReplace, ENOSYS):
                    Log.debug("download \(transfer.id): no rename without replacing in \(downloads) (\(error.reason)); copying into a new file")
                    way = .exclusiveCopy
                default:
                    throw error
                }
            }
        }
    }

    /// Moves the `.part` to go with the final name `next`, replacing nothing
    /// (`FileIO.moveNoReplace`); where the file system cannot, it stays where it is. Nil when
    /// `next`'s `.part` is there already (another download chose that name meanwhile).
    private func movePart(_ part: LocalPath, along next: LocalPath) throws(SystemError) -> LocalPath? {
        let moved = Self.partPath(of: next)
        do throws(SystemError) {
            try FileIO.moveNoReplace(part, to: moved)
            return moved
        } catch where error.errno == EEXIST {
            return nil
        } catch where [EINVAL, ENOSYS].contains(error.errno) {
            return part
        }
    }

    /// Creates `destination` exclusively and copies the `.part` into it, synced. A copy that
    /// fails removes the half-made file (ours: it was created exclusively). A kill in the
    /// middle can leave it; this is the one way in that is not a single step, used only
    /// where the file system offers neither hard links nor a rename that refuses to replace.
    /// The copy's fingerprint.
    private func copyExclusively(_ part: LocalPath, to destination: LocalPath) throws(SystemError) -> FileFingerprint {
        let target = try OpenFile(destination, O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
        do throws(SystemError) {
            let source = try OpenFile(part, O_RDONLY)
            let length = try source.size()
            do {
                try FileIO.readBlocks(source.descriptor, from: 0, length: length, path: part.display) { block in
                    try FileIO.write(target.descriptor, block, path: destination.display)
                }
            } catch let e as SystemError {
                throw e
            } catch {
                throw SystemError("copy", errno: EIO, path: destination.display)
            }
            try target.sync()
            let copy = FileFingerprint(try target.status())
            try target.close()
            try source.close()
            return copy
        } catch {
            do { try FileIO.unlink(destination, ifPresent: true) } catch let left {
                Log.warning("download \(transfer.id): the half-made \(destination.display) could not be removed: \(left)")
            }
            throw error
        }
    }

    /// An agent killed between moving the file into place and completing the row left the
    /// file under its recorded name: recognised by its size and SHA-256, it completes the
    /// row without a byte fetched again, and no second copy appears.
    private func recogniseFinishedFile() throws -> JobOutcome? {
        guard let expected = transfer.sha256, !transfer.localPath.bytes.isEmpty else { return nil }
        let path = transfer.localPath
        // Whatever cannot be opened as a plain file is not ours.
        guard let file = try? OpenFile(path, O_RDONLY | O_NOFOLLOW) else { return nil }
        let st = try file.status()
        guard FileKind.of(mode: st.st_mode) == .regular, Int64(st.st_size) == transfer.bytesTotal else { return nil }
        let sha = RunningSHA256()
        try FileIO.readBlocks(file.descriptor, from: 0, length: Int64(st.st_size), path: path.display) { sha.update($0) }
        guard sha.hexDigest == expected else { return nil }
        try file.close()
        try FileIO.unlink(Self.partPath(of: path), ifPresent: true)
        // Its bytes: the file as placed (a copy is another file than the one written).
        if transfer.fingerprint != FileFingerprint(st) { try store.recordPlacedFile(transfer.id, FileFingerprint(st)) }
        Log.info("download \(transfer.id): \(path.display) is already in place from an earlier run")
        return .completed(sha256: expected, bytes: Int64(st.st_size))
    }

    /// Chooses the final name and claims it at once by creating its `.part` exclusively, so
    /// two downloads of the same name never pick the same file.
    private func reserveName(for item: RemoteItem) throws -> LocalPath {
        for _ in 0..<1000 {
            let candidate = LocalPath(downloads).appending(try chooseName(for: item))
            do throws(SystemError) {
                try OpenFile(Self.partPath(of: candidate), O_WRONLY | O_CREAT | O_EXCL, mode: 0o644).close()
                return candidate
            } catch {
                guard error.errno == EEXIST else { throw error }
            }
        }
        throw Classified(Reason(.localWrite, "no free name for \(item.name) in \(downloads)"))
    }

    /// A safe, free name in the download folder: sanitised, with `(1)` when taken.
    private func chooseName(for item: RemoteItem) throws -> String {
        let preferred = DownloadName.sanitize(item.name.isEmpty ? String(transfer.remotePath.split(separator: "/").last ?? "") : item.name)
        return DownloadName.available(in: downloads, preferred: preferred) { FileIO.nameExists(LocalPath($0)) }
    }

    static func partPath(of final: LocalPath) -> LocalPath {
        LocalPath(bytes: final.bytes + Array(DownloadName.partSuffix.utf8))
    }

    /// Removes the `.part` of a download that is given up (cancelled); a failure is logged.
    static func removePartial(of row: Transfer) {
        guard !row.localPath.bytes.isEmpty else { return }
        do { try FileIO.unlink(partPath(of: row.localPath), ifPresent: true) } catch {
            Log.warning("download \(row.id): its partial file could not be removed: \(error)")
        }
    }
}
