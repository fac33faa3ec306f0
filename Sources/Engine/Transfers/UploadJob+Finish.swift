import Glibc
import Platform
import Queue
import Transport

/// Making the file: the last step never replaces what is there, and a kill inside it is
/// recognised afterwards instead of repeated.
///
/// Before the request that makes the file (tus's last chunk, `finish`, a direct PUT) the row
/// records the name, size and SHA-256 it is about to make (`recordFinishing`). That request
/// is conditional where the protocol has a conditional form (`MOVE` with `Overwrite: F`,
/// `PUT` with `If-None-Match: *`); a file found there (`NameTaken`) moves ours to the next
/// free `name (n).ext`, recorded first too. A new version of a file replaces only the
/// version it was made from (`If-Match`, a tagged `If`); another version found there
/// (`VersionChanged`) sends ours beside it as a conflicted copy. After a restart in the
/// finishing state the server is asked what is at the recorded name (`recogniseMadeFile`).
extension UploadJob {
    /// Names tried after a `NameTaken` before giving up: a server that refuses every free
    /// name it does not list is not believed forever.
    static let maxNameTries = 10

    /// Commits, before the request that makes the file, what that request will make;
    /// durably unless the caller says the server itself will tell (see `store.recordFinishing`).
    /// A direct PUT's new file claims its name in the same commit (the look at the target left
    /// it unclaimed); `NameClaimed` when another upload in the queue claimed it meanwhile, or
    /// made its file there since this attempt began (see `store.isRemotePathClaimed`).
    func recordFinishing(_ row: inout Transfer, size: Int64, sha256: String?, durable: Bool = true) throws {
        let claiming = directPut && row.replaceable == nil
        guard try store.recordFinishing(row.id, remotePath: row.remotePath, bytes: size, sha256: sha256, durable: durable,
                                        claimingFor: claiming ? row.accountID : nil)
        else { throw NameClaimed(path: row.remotePath) }
        row.finishing = true
        row.sha256 = sha256
        CrashWindow.aboutToMakeFile.pauseIfTesting(transfer: row.id, cancellation: cancellation)
    }

    /// Another upload in the queue claimed the row's name since the look at the target: the
    /// row takes the next free one.
    func moveAside(_ row: inout Transfer, from claimed: NameClaimed) throws {
        row.remotePath = try TargetCheck(dav: dav, store: store, row: row).freeName(instead: claimed.path)
        Log.info("upload \(row.id): another upload in the queue is headed for \(claimed.path); this one goes as \(row.remotePath)")
    }

    /// Makes the uploaded bytes the file, where nothing is: a name taken meanwhile moves it
    /// to the next free one, without sending a byte again. A folder removed since the upload
    /// began is made again once (Nextcloud's MOVE and a temporary's MOVE answer 409 without it).
    func finish(_ handle: String, row: inout Transfer, source: SourceFile, sha256: String) throws {
        var remadeFolder = false
        for _ in 0..<Self.maxNameTries {
            // The If header is not honoured by every server: the version is also looked at
            // just before (the window left: one round trip, on those servers).
            if row.replaceable != nil, try !isStillTheVersion(row) { try divertToConflictedCopy(&row) }
            do {
                try recordFinishing(&row, size: source.size, sha256: sha256)
                try upload.finish(handle, as: target(row, source), sha256: sha256)
                return
            } catch is VersionChanged {
                try divertToConflictedCopy(&row)
            } catch let claimed as NameClaimed {
                // An empty file's one PUT is made here, not with a body.
                try moveAside(&row, from: claimed)
            } catch let taken as NameTaken {
                row.remotePath = try nextFreeName(after: taken, row: row)
                Log.info("upload \(row.id): someone saved another file as \(taken.path) while this one was sent; it becomes \(row.remotePath), nothing sent again")
            } catch let e as HTTPStatusError where e.status == 409 && (e.step == .move || e.step == .put) && !remadeFolder {
                guard try recreateMissingFolder(row) else { throw e }
                remadeFolder = true
                Log.info("upload \(row.id): made \(row.remoteFolder) again")
            }
        }
        throw Classified(Reason(.protocol, "the server refused \(Self.maxNameTries) free names in \(row.remoteFolder) as taken"))
    }

    /// The name to finish under after `taken`: the server must list a file at the taken
    /// name (a 412 for anything else is not believed), and the next free `name (n).ext`
    /// is claimed for the row.
    func nextFreeName(after taken: NameTaken, row: Transfer) throws -> String {
        guard try dav.exists(taken.path) else {
            throw ProtocolViolation("the server refused to make \(taken.path) as taken (412), yet lists nothing there")
        }
        return try TargetCheck(dav: dav, store: store, row: row).freeName(instead: taken.path)
    }

    /// tus makes the file with the chunk that reaches the length and has no conditional form
    /// of it, so the target is looked at just before that chunk (held back to one byte): it
    /// must hold nothing, or, for a new version, still the version it replaces. The window
    /// left: a file saved at the name between this PROPFIND and the server's handling of that
    /// one-byte PATCH (about one round trip) is replaced by the upload, as the server would
    /// replace it for any tus client.
    func targetAllowsTheLastChunk(_ row: Transfer) throws -> Bool {
        guard row.replaceable == nil else { return try isStillTheVersion(row) }
        do {
            _ = try dav.properties(of: row.remotePath)
            return false
        } catch let e as HTTPStatusError where e.status == 404 {
            return true
        }
    }

    /// tus found its name no longer fit to finish at before its last byte: the upload there
    /// is given up and the file goes again, from zero, under the next free name or as a
    /// conflicted copy (its name was fixed when the upload was created).
    func sendAgain(_ row: inout Transfer, source: SourceFile) throws {
        if let handle = row.uploadURL { try? upload.abandon(handle) }
        let taken = row.remotePath
        let why: String
        if row.replaceable != nil {
            try divertToConflictedCopy(&row)
            why = "the server's copy of \(taken) changed while its new version was sent"
        } else {
            row.remotePath = try nextFreeName(after: NameTaken(path: taken), row: row)
            why = "someone saved another file as \(taken) while this one was sent"
        }
        let note = Reason(.uploadLost, "\(why); tus cannot finish it under another name, so it is sent again as \(row.remotePath)")
        Log.info("upload \(row.id): \(note.message)")
        try store.restartFromZero(row.id, note: note, fingerprint: source.fingerprint, bytesTotal: source.size)
        row.uploadURL = nil
        row.uploadExpiresAt = nil
        row.checkpoint = Checkpoint()
        row.finishing = false
    }

    /// True while the server's file at the row's path is the version this new version replaces.
    func isStillTheVersion(_ row: Transfer) throws -> Bool {
        guard let etag = row.replaceable else { return false }
        do {
            let item = try dav.properties(of: row.remotePath)
            return !item.isFolder && item.etag.map { Replacing.sameVersion($0, etag) } == true
        } catch let e as HTTPStatusError where e.status == 404 {
            return false
        }
    }

    /// The server's copy is not the version this one was made from (changed, or deleted):
    /// this version goes beside it as `name (conflicted copy YYYY-MM-DD HHMM).ext`, and the
    /// server's copy is left alone.
    func divertToConflictedCopy(_ row: inout Transfer) throws {
        let original = row.remotePath
        let name = DownloadName.conflicted(String(original.split(separator: "/").last ?? ""), stamp: DownloadName.stamp(time(nil)))
        let wanted = RemotePath.join(row.remoteFolder, name)
        let check = TargetCheck(dav: dav, store: store, row: row)
        if try !dav.exists(wanted), try store.claimRemotePath(row.id, wanted, accountID: row.accountID) {
            row.remotePath = wanted
        } else {
            row.remotePath = try check.freeName(instead: wanted)
        }
        Log.info("upload \(row.id): \(original) changed on the server since it was downloaded; this version goes beside it as \(row.remotePath), the server's copy is left alone")
    }

    /// After a kill inside the request that makes the file: when the file at the recorded
    /// name is this upload's, the row completes and nothing is sent again.
    ///
    /// The file there is ours when its size is the recorded one and its checksum, where the
    /// server reports one, is the file's SHA-256. Without a checksum, the upload itself
    /// says whether the finishing request did not happen (a `finish`'s upload still held,
    /// tus's held short) or did (tus's held whole). Gone, it says nothing certain: a `finish`
    /// uses its upload up, but an upload also expires unfinished. Then, and after a direct
    /// PUT, which leaves nothing to ask, a file of our size at the name may be someone
    /// else's, saved while ours was refused, broken off or expired: the file is read back, and
    /// is ours only if its SHA-256 is the file's.
    ///
    /// A new version edited again since is judged by the size and SHA-256 it recorded: made,
    /// it is the server's version now, and the edit goes next (`noteLocalDrive`).
    func recogniseMadeFile(_ row: Transfer, source: SourceFile, capabilities: UploadCapabilities) throws -> JobOutcome? {
        let recorded = row.newVersionOf != nil && row.sha256 != nil
        guard recorded || row.bytesTotal == source.size else { return nil }
        let size = row.bytesTotal
        let item: RemoteItem
        do { item = try dav.properties(of: row.remotePath) } catch let e as HTTPStatusError where e.status == 404 { return nil }
        guard !item.isFolder, item.size == size else { return nil }
        // The version a new version replaces is never ours, whatever its size.
        if let replaced = row.replaceable, let etag = item.etag, Replacing.sameVersion(etag, replaced) { return nil }
        let sha = try row.sha256 ?? wholeFileDigest(source)
        // The file at the name read back after the listing, and found ours.
        var readBack = false
        func isReadBackOurs() throws -> Bool {
            readBack = try dav.sha256(of: row.remotePath) == sha.lowercased()
            return readBack
        }
        if let theirs = item.sha256 {
            guard theirs.lowercased() == sha.lowercased() else { return nil }
        } else {
            switch capabilities.finalStep {
            case .wholeFileSend:
                guard try isReadBackOurs() else { return nil }
            case .finish, .lastChunk:
                // A tus upload held whole made the file with its last chunk, at a name free just
                // before it. One still held short did not. One gone may have been used up by the
                // request that makes the file, or may have expired unfinished while someone saved
                // a file of our size at the name: only its bytes tell.
                guard let handle = row.uploadURL else { return nil }
                switch try upload.status(of: handle, confirmed: row.checkpoint.offset) {
                case .holds(let offset, _, _):
                    guard capabilities.finalStep == .lastChunk, offset >= source.size else { return nil }
                case .forgotten:
                    guard try isReadBackOurs() else { return nil }
                }
            }
        }
        Log.info("upload \(row.id): \(row.remotePath) on the server is this upload's file, made before the agent stopped; nothing sent again")
        try recordMadeVersion(row, listed: item, sha256: sha, proven: readBack)
        counters.resumedAt = size
        try store.checkpoint(row.id, offset: size, hashState: nil, counters: counters, resetAttempts: false)
        return .completed(sha256: sha, bytes: size, verified: true)
    }

    /// Whether the file made is looked at on the server afterwards. The upload's own replies
    /// already said the server took every byte (tus's final offset, the length a Nextcloud
    /// assembly or a PUT was given) and refused to replace anything; the look is made where
    /// something relies on it: the original goes to the trash, a new version's ETag is kept
    /// for the next edit, or the person asked for it (`check_every_upload`).
    func mustCheckMadeFile(_ row: Transfer) -> Bool {
        settings.checkEveryUpload || settings.proofNeeded || row.newVersionOf != nil
    }

    /// A new version's ETag, kept so that the next edit of the file replaces this version and
    /// no other. A listing made after the upload may already show another client's save at
    /// the name, and some servers' replies name another ETag than their listings for the same
    /// file, so the listed ETag is kept only where the server shows the file there is ours:
    /// the reply of the request that made it named the same ETag; or the listing's checksum
    /// is the file's; or the file, read back whole after the listing (`proven`: the caller
    /// did), is ours. When nothing shows it, none is kept: the next edit then goes beside the
    /// server's file instead of over it. Without a listing, the reply's ETag is all there is.
    func recordMadeVersion(_ row: Transfer, listed: RemoteItem?, sha256: String, proven: Bool = false) throws {
        guard row.newVersionOf != nil else { return }
        guard let listed else {
            if let made = upload.madeETag { try store.recordMadeVersion(row.id, etag: made) }
            return
        }
        guard let etag = listed.etag else { return }
        let ours: Bool
        if proven || upload.madeETag.map({ Replacing.sameVersion($0, etag) }) == true {
            ours = true
        } else if let theirs = listed.sha256 {
            ours = theirs.lowercased() == sha256.lowercased()
        } else {
            // Read after the listing: bytes that are still ours were ours when it was made.
            ours = try dav.sha256(of: row.remotePath) == sha256.lowercased()
        }
        guard ours else {
            Log.info("upload \(row.id): the server's copy of \(row.remotePath) is not this version; the next edit goes beside it")
            return
        }
        try store.recordMadeVersion(row.id, etag: etag)
    }

    /// The file the server made must have the file's size, and where the server reports a
    /// checksum of what it stored, the file's SHA-256. The server's listing of it when it
    /// showed it so; nil when it could not be asked (the upload's own replies stand, but
    /// nothing that needs proof, like moving the original to the trash, relies on them), or
    /// when it shows another version than the one the reply named: not a damaged copy of
    /// ours, but another client's save over it since.
    func verifyOnServer(_ path: String, size: Int64, digest: String) throws -> RemoteItem? {
        let item: RemoteItem
        do { item = try dav.properties(of: path) } catch {
            Log.info("upload \(transfer.id): could not ask the server about the finished file (\(error)); it counts as sent, not as checked")
            return nil
        }
        if item.isFolder { throw Classified(Reason(.integrity, "the server shows a folder at \(path) where the file was made")) }
        guard let stored = item.size else { return nil }
        let mismatch: String?
        if stored != size {
            mismatch = "the server's copy has \(stored) bytes, the file \(size)"
        } else if let theirs = item.sha256, theirs.lowercased() != digest.lowercased() {
            mismatch = "the server's copy does not match the file (SHA-256 \(theirs.prefix(12))… instead of \(digest.prefix(12))…)"
        } else {
            mismatch = nil
        }
        guard let mismatch else { return item }
        if let made = upload.madeETag, let now = item.etag, !Replacing.sameVersion(made, now) {
            Log.info("upload \(transfer.id): \(path) was made whole, and the server now shows another version there; it counts as sent, not as checked")
            return nil
        }
        throw Classified(Reason(.integrity, mismatch))
    }
}

/// Another upload in the queue claimed the name an upload was about to make its file at.
struct NameClaimed: Error {
    let path: String
}
