import Platform
import Queue
import Transport

/// Sends one queued file through the account's upload protocol, resuming from wherever the
/// server stands.
///
/// Runs on its own thread with its own queue connection. Which way to go is decided by
/// `ResumePolicy` from what the file, the row and the server say; this type gathers those
/// facts and carries the steps out: it asks the server before anything is sent, looks at
/// the target before an upload is created (`TargetCheck`), sends chunk by chunk with one
/// checkpoint per confirmed chunk (`UploadJob+Chunks`), and starts from zero only through
/// the backoff. It does not know which protocol it drives.
final class UploadJob {
    let transfer: Transfer
    let account: Account
    let store: QueueStore
    /// The protocol this file goes by (per account, and for Nextcloud per file: `sendsInOnePut`).
    private(set) var upload: UploadProtocol
    let credentials: Credentials?
    let dav: WebDAVClient
    let settings: TransferSettings
    let serverInfo: ServerInfoCache
    let cancellation: CancellationFlag

    var counters = ResumeCounters()
    var progressed = false
    /// The protocol sends whole files only: a broken try starts again from zero.
    var wholeFileOnly = false
    /// The protocol makes the file with one PUT to its name, and keeps nothing before it: a
    /// new file's name is claimed in the commit that records the file made (`recordFinishing`).
    var directPut = false
    /// The bytes are all on the server and the file is being made of them.
    var finishing = false

    init(transfer: Transfer, account: Account, credentials: Credentials?, store: QueueStore,
         settings: TransferSettings, serverInfo: ServerInfoCache, cancellation: CancellationFlag) throws {
        self.transfer = transfer
        self.account = account
        self.store = store
        self.settings = settings
        self.serverInfo = serverInfo
        self.cancellation = cancellation
        self.credentials = credentials
        upload = try UploadJob.uploadProtocol(for: account, credentials: credentials, size: transfer.bytesTotal,
                                              handle: transfer.uploadURL)
        dav = WebDAVClient(root: account.webdavURL, credentials: credentials)
        settings.prepare(upload.session, for: account, cancellation: cancellation)
        settings.prepare(dav.session, for: account, cancellation: cancellation)
    }

    /// Nextcloud: a file up to this size goes as one PUT to its final name (with
    /// `If-None-Match: *`, or `If-Match` for a new version), not as a chunked upload (MKCOL of
    /// an upload folder, one chunk PUT, `MOVE .file`: three requests where one does), as
    /// Nextcloud's desktop client sends files under its chunk size (10 MB). Nextcloud writes
    /// such a PUT to a part file and renames it when whole, so a broken one leaves nothing
    /// under the name. Why 8 MiB:
    /// - the first chunk the engine sends to Nextcloud is 16 MiB by default (at least 5 MiB),
    ///   so a file this small goes in one chunk anyway: a broken PUT costs what a broken
    ///   chunk would (chunks too are kept whole or not at all);
    /// - the PUT carries the file's SHA-256 in its head (`OC-Checksum`), so the file is hashed
    ///   before it is sent, as a checksummed chunk is (read twice past `heldChunkLimit`);
    /// - past a few MiB the two extra requests cost little beside the body.
    static let onePutLimit: Int64 = 8 << 20

    /// Whether a Nextcloud upload goes as one PUT. An upload already begun keeps its way,
    /// whatever the file's size says now (a PUT's handle is its target's path, from `/`; an
    /// upload folder's name has no `/`), so a resumed row, an upload made by an older agent
    /// and a cancel all meet the protocol that made the handle; a new one goes by the size.
    static func sendsInOnePut(size: Int64, handle: String?) -> Bool {
        if let handle { return handle.hasPrefix("/") }
        return size <= onePutLimit
    }

    /// The protocol discovery chose for the account's server when it was added; for Nextcloud,
    /// one PUT for a small file (`sendsInOnePut`), chunked upload for the others.
    static func uploadProtocol(for account: Account, credentials: Credentials?, size: Int64, handle: String?) throws -> UploadProtocol {
        switch account.server.uploadMethod {
        case .tus:
            if account.server.createsTusInFolders {
                return TusUpload(creatingInFoldersOf: account.webdavURL, credentials: credentials,
                                 maxChunkSize: account.server.maxChunkSize)
            }
            guard let tus = account.tusURL else { throw missingAddress(account, "tus") }
            return TusUpload(endpoint: tus, credentials: credentials)
        case .nextcloudChunking where sendsInOnePut(size: size, handle: handle):
            return WebDAVPutUpload(root: account.webdavURL, credentials: credentials, placement: .direct, storesChecksum: true)
        case .nextcloudChunking:
            guard let uploads = account.server.uploadsURL else { throw missingAddress(account, "upload folders") }
            return NextcloudUpload(uploadsURL: uploads, webdavURL: account.webdavURL, credentials: credentials)
        case .webdavPut:
            return WebDAVPutUpload(root: account.webdavURL, credentials: credentials,
                                   placement: account.server.putViaTemporary ? .viaTemporary : .direct)
        }
    }

    private static func missingAddress(_ account: Account, _ what: String) -> Classified {
        Classified(Reason(.protocol, "the account \(DisplayText.escape(account.name)) has no \(what) address",
                          action: "add the account again: `instant-upload account add`"))
    }

    /// What the server's capabilities are remembered under: one protocol at one address.
    static func capabilityKey(_ account: Account) -> String {
        account.server.uploadMethod.rawValue + " " + (account.tusURL ?? account.server.uploadsURL ?? account.webdavURL)
    }

    /// What folder listings are remembered under: the tree one user sees at one address.
    /// Accounts of one server share its upload address (tus's `/files/`), never their folders.
    static func folderKey(_ account: Account) -> String {
        account.username + " " + account.webdavURL
    }

    /// The capabilities of the protocol this job drives: a Nextcloud account has two.
    private var capabilitiesKey: String {
        Self.capabilityKey(account) + (upload is WebDAVPutUpload && account.server.uploadMethod == .nextcloudChunking ? " one-put" : "")
    }

    /// A new upload of a file whose size is not the one the row recorded goes by the way its
    /// size now says (Nextcloud: one PUT or chunks); an upload already begun keeps its own.
    private func chooseProtocol(size: Int64, handle: String?) throws {
        guard account.server.uploadMethod == .nextcloudChunking, handle == nil,
              Self.sendsInOnePut(size: size, handle: nil) != Self.sendsInOnePut(size: transfer.bytesTotal, handle: transfer.uploadURL)
        else { return }
        upload = try Self.uploadProtocol(for: account, credentials: credentials, size: size, handle: nil)
        settings.prepare(upload.session, for: account, cancellation: cancellation)
    }

    func run() -> JobOutcome {
        do {
            return try attempt()
        } catch {
            if cancellation.isCancelled { return .stopped }
            var c = FailureClassifier.classify(error, direction: .upload)
            if c.reason.code == .uploadLost || c.reason.code == .uploadExpired {
                // Said by a chunk, not by the question that alone may end an upload: the
                // next attempt asks the server before anything starts again.
                c.reason = Reason(c.reason.code, "the server did not find the upload while it was sent; asking it again before starting over")
            }
            if c.isTransient, wholeFileOnly, !finishing {
                // A plain PUT keeps nothing of a broken try: say so, the bar goes back to zero.
                c.reason.message += account.server.uploadMethod == .nextcloudChunking
                    ? "; a file this small goes in one request, so it is sent again from the start"
                    : "; this server cannot resume an upload, so the file is sent again from the start"
            }
            return c.isTransient ? .retry(c, progressed: progressed) : .failed(c.reason)
        }
    }

    /// One attempt: at most a few policy steps (ask, look at the target, send, finish), each
    /// moving forward, so an attempt can never turn in circles.
    private func attempt() throws -> JobOutcome {
        let source = try SourceFile(transfer.localPath)
        let size = source.size
        try chooseProtocol(size: size, handle: transfer.uploadURL)
        let capabilities = try serverInfo.info(for: capabilitiesKey) { try upload.capabilities() }
        wholeFileOnly = capabilities.wholeFileOnly
        directPut = capabilities.finalStep == .wholeFileSend
        if let max = capabilities.maxSize, size > max {
            throw Classified(Reason(.tooLarge, "the file is \(size) bytes; the server accepts at most \(max)"))
        }

        var row = transfer
        if row.finishing, let made = try recogniseMadeFile(row, source: source, capabilities: capabilities) { return made }
        if row.newVersionOf != nil, let recorded = row.fingerprint, recorded != source.fingerprint {
            if let there = try store.tradedNames(row, fileNow: source.fingerprint) {
                // Local Drive moves the row to its file once it has seen the trade.
                let reason = Reason(.sourceChanged, "the file traded names with \(there.lastComponent.display), another downloaded file; it waits until Local Drive has followed that")
                return .retry(Classification(reason: reason, retryAfter: settings.settleSeconds + 2), progressed: false)
            }
            if try store.cancelNewVersionOfGoneFile(row.id, fileNow: source.fingerprint) { return .stopped }
        }
        if directPut {
            // A direct PUT holds nothing on the server until it has made the file: each attempt
            // begins with the look at the target, as a new upload does, and so also finds a
            // file that the last one made after a power cut took back its record of it.
            row.uploadURL = nil
        }
        var server = ResumePolicy.Server.notAsked
        var askedAfterRefusal = false
        var digest: String?
        for _ in 0..<Self.maxSteps {
            if cancellation.isCancelled { return .stopped }
            let facts = ResumePolicy.Facts(file: fileFacts(row, source), row: rowFacts(row), server: server, size: size,
                                           confirmed: row.checkpoint.offset)
            switch ResumePolicy.next(facts, settleSeconds: settings.settleSeconds) {
            case .waitForFile(let seconds):
                if facts.file == .beingWritten {
                    Log.info("upload \(row.id): the file changed and is still open for writing; waiting until it is closed")
                    return .retry(Classification(reason: stillOpenForWriting, retryAfter: seconds), progressed: progressed)
                }
                Log.info("upload \(row.id): the file changed; waiting until it has been still for \(Int(settings.settleSeconds)) s")
                return .retry(Classification(reason: stillBeingWritten, retryAfter: seconds), progressed: progressed)

            case .ask:
                server = try ask(&row)

            case .restart(let note, let abandon):
                return try restart(row, because: note, abandon: abandon, fingerprint: source.fingerprint)

            case .goBack(let offset, let note):
                // The hash state belongs to the confirmed offset: none is kept, so the next
                // attempt hashes the file again from its start up to `offset`.
                try store.checkpoint(row.id, offset: offset, hashState: nil, counters: counters, resetAttempts: false)
                let restarts = try store.countRestart(row.id)
                Log.info("upload \(row.id): \(note.message)")
                return .retry(Classification(reason: note, restarts: restarts), progressed: true)

            case .lookAtTarget:
                if row.fingerprint != source.fingerprint {
                    // The version sent is the one recorded, so a later change is noticed.
                    try store.restartFromZero(row.id, note: nil, fingerprint: source.fingerprint, bytesTotal: size)
                    row.fingerprint = source.fingerprint
                }
                if row.replaceable != nil, try !isStillTheVersion(row) { try divertToConflictedCopy(&row) }
                if row.replaceable == nil {
                    let check = TargetCheck(dav: dav, store: store, row: row, folders: (serverInfo, Self.folderKey(account)),
                                            claimsLater: directPut)
                    switch try check.verdict(size: size, digest: { try wholeFileDigest(source) }) {
                    case .alreadyThere(let path, let sha):
                        row.remotePath = path
                        Log.info("upload \(row.id): \(path) is already on the server with the same content; nothing to send")
                        return .completed(sha256: sha, bytes: size, verified: true, counters: counters)
                    case .uploadTo(let path):
                        row.remotePath = path
                        CrashWindow.targetChecked.pauseIfTesting(transfer: row.id, cancellation: cancellation)
                    }
                }
                if size == 0, capabilities.finalStep == .lastChunk {
                    // An empty tus upload is whole, and its file made, by its creation.
                    try recordFinishing(&row, size: 0, sha256: RunningSHA256().hexDigest)
                }
                try startUpload(&row, source)
                server = .holds(offset: 0, length: size)

            case .send(let offset):
                do {
                    switch try sendRest(of: source, row: &row, from: offset, capabilities: capabilities) {
                    case .sent(let sha):
                        digest = sha
                        server = .holds(offset: size, length: size)
                    case .stopped(let outcome):
                        return outcome
                    case .nameTaken:
                        // Only tus gets here: its upload cannot be made under another name.
                        try sendAgain(&row, source: source)
                        server = .notAsked
                    }
                } catch let claimed as NameClaimed {
                    try moveAside(&row, from: claimed)
                    try startUpload(&row, source)
                    server = .holds(offset: 0, length: size)
                } catch let taken as NameTaken {
                    // A direct PUT found a file at the name: nothing of ours was stored.
                    row.remotePath = try nextFreeName(after: taken, row: row)
                    Log.info("upload \(row.id): someone saved another file as \(taken.path) before this one was sent; it is sent as \(row.remotePath)")
                    try startUpload(&row, source)
                    server = .holds(offset: 0, length: size)
                } catch is VersionChanged {
                    // A direct PUT of a new version found another version there.
                    try divertToConflictedCopy(&row)
                    try startUpload(&row, source)
                    server = .holds(offset: 0, length: size)
                } catch let e as HTTPStatusError where [404, 409, 410].contains(e.status) && !askedAfterRefusal {
                    // Never resend blindly: ask where the server stands, once, and go on from there.
                    askedAfterRefusal = true
                    // A missing parent is 409 on most servers, 404 on rclone's (Go's WebDAV handler).
                    if e.status != 410, try recreateMissingFolder(row) { Log.info("upload \(row.id): made \(row.remoteFolder) again") }
                    server = try ask(&row)
                }

            case .finish:
                guard let handle = row.uploadURL else { throw ProtocolViolation("no upload to finish") }
                // tus made the file with its last chunk (or its creation), a direct PUT with its
                // body, each after `recordFinishing`; a direct PUT's empty file is made by
                // `finish`. A file made already is not looked at as the version it replaces
                // (it is the new one now), nor made again.
                let madeAlready = capabilities.finalStep == .lastChunk || (capabilities.finalStep == .wholeFileSend && size > 0)
                // A file changed while it was sent waits to be sent whole; but a new version
                // a direct PUT made already is the server's version now: it completes with the
                // bytes it sent (their digest), and the edit since goes next (`noteLocalDrive`).
                let sentIsTheVersion = madeAlready && row.newVersionOf != nil
                if capabilities.finalStep != .lastChunk, !sentIsTheVersion, try !source.isUnchanged() {
                    return .retry(Classification(reason: stillBeingWritten, retryAfter: settings.settleSeconds), progressed: progressed)
                }
                let sha = try digest ?? finishedHash(source, row: row)
                finishing = true
                if !madeAlready {
                    do {
                        try finish(handle, row: &row, source: source, sha256: sha)
                    } catch let e as HTTPStatusError where e.status == 404 && e.step == .move && !askedAfterRefusal {
                        // What was to become the file is gone: a temporary moved away with its
                        // folder renamed, an upload expired. Ask, and go on from there.
                        askedAfterRefusal = true
                        noteTemporaryGone(handle, row: row)
                        server = try ask(&row)
                        continue
                    }
                }
                CrashWindow.fileMade.pauseIfTesting(transfer: row.id, cancellation: cancellation)
                serverInfo.noteMade(row.remotePath, in: row.remoteFolder, of: Self.folderKey(account))
                guard mustCheckMadeFile(row) else { return .completed(sha256: sha, bytes: size, counters: counters) }
                let made = try verifyOnServer(row.remotePath, size: size, digest: sha)
                try recordMadeVersion(row, listed: made, sha256: sha)
                return .completed(sha256: sha, bytes: size, verified: made != nil, counters: counters)
            }
        }
        throw ProtocolViolation("the server's answers about the upload went round in circles")
    }

    static let maxSteps = 8

    /// A plain WebDAV temporary gone from the file's folder before its MOVE: most likely the
    /// folder was renamed or moved on the server and took it along. The file goes again;
    /// the copy left wherever the folder went is the person's to delete, since the agent
    /// cannot tell where that is. Said in the log, with its name.
    private func noteTemporaryGone(_ handle: String, row: Transfer) {
        guard let put = upload as? WebDAVPutUpload, put.placement == .viaTemporary else { return }
        let name = handle.split(separator: "/").last.map(String.init) ?? handle
        Log.warning("upload \(row.id): its temporary \(DisplayText.escape(name)) is no longer in \(DisplayText.escape(row.remoteFolder)) on the server "
                    + "(the folder was renamed or moved there, say, and took it along); the file is sent again, and that temporary, "
                    + "wherever it went, is a copy that can be deleted")
    }

    /// The note of a row whose file is being written to.
    var stillBeingWritten: Reason {
        Reason(.sourceChanged, "the file is changing; it waits until it has been still for \(Int(settings.settleSeconds)) s")
    }

    /// The note of a row whose changed file a program still holds open for writing.
    var stillOpenForWriting: Reason {
        Reason(.sourceChanged, "the file changed and a program still has it open for writing; it waits until the file is closed and has been still for \(Int(settings.settleSeconds)) s")
    }

    /// A changed file still for the settle time is asked once more, of the kernel: a save
    /// that paused with its file open is not whole (where the kernel cannot tell, the
    /// settle time alone decides, as for the watcher).
    private func fileFacts(_ row: Transfer, _ source: SourceFile) -> ResumePolicy.File {
        guard let recorded = row.fingerprint, recorded != source.fingerprint else { return .unchanged }
        let stillFor = source.stillFor
        if stillFor >= settings.settleSeconds, case .some = source.writers { return .beingWritten }
        return .changed(stillFor: stillFor)
    }

    private func rowFacts(_ row: Transfer) -> ResumePolicy.Row {
        guard row.uploadURL != nil else { return .noUpload }
        return .upload(expiryPassed: row.uploadExpiresAt.map { $0 < nowMilliseconds() } ?? false)
    }

    /// The file the upload becomes, with the local file's size and mtime.
    func target(_ row: Transfer, _ source: SourceFile) -> UploadTarget {
        let name = String(row.remotePath.split(separator: "/").last ?? "")
        let mtime = source.fingerprint.mtimeNanoseconds / 1_000_000_000
        return UploadTarget(remotePath: row.remotePath, length: source.size, contentType: MediaType.guess(name), mtime: mtime,
                            replacing: row.replaceable.map { .version(etag: $0) } ?? .nothing)
    }

    /// A new upload on the server for the row's target, remembered with the row.
    func startUpload(_ row: inout Transfer, _ source: SourceFile) throws {
        let started: UploadStanding.Started
        do {
            started = try upload.start(target(row, source))
        } catch let e as HTTPStatusError where e.step == .create && [404, 409, 412].contains(e.status) {
            // A folder that a remembered listing showed may be gone since: oCIS creates no
            // upload in a missing folder (412). Made again, the creation is asked once more.
            guard try recreateMissingFolder(row) else { throw e }
            Log.info("upload \(row.id): made \(row.remoteFolder) again")
            started = try upload.start(target(row, source))
        }
        // A direct PUT's handle is its target's path and stands for nothing on the server:
        // the row learns of the upload with the file it makes (`recordFinishing`).
        if !directPut { try store.startedUpload(row.id, url: started.handle, expiresAt: started.expiresAt) }
        row.uploadURL = started.handle
        row.uploadExpiresAt = started.expiresAt
        row.checkpoint = Checkpoint()
        counters.resumedAt = 0
    }

    /// Where the server stands on the row's upload; the expiry it gives is kept with the row.
    private func ask(_ row: inout Transfer) throws -> ResumePolicy.Server {
        guard let handle = row.uploadURL else { return .notAsked }
        switch try upload.status(of: handle, confirmed: row.checkpoint.offset) {
        case .holds(let offset, let length, let expiresAt):
            if let expiresAt, expiresAt != row.uploadExpiresAt {
                try store.setUpload(row.id, url: handle, expiresAt: expiresAt)
                row.uploadExpiresAt = expiresAt
            }
            return .holds(offset: offset, length: length)
        case .forgotten(let expired):
            Log.info("upload \(row.id): the server no longer has the partial upload (\(expired ? "expired" : "not found"))")
            return .forgotten(expired: expired)
        }
    }

    /// Gives the server's upload up and forgets the row's progress; the next attempt starts
    /// from zero after the backoff, which waits longer after a few restarts in a row.
    private func restart(_ row: Transfer, because note: Reason, abandon: Bool, fingerprint: FileFingerprint) throws -> JobOutcome {
        if abandon, let handle = row.uploadURL { try? upload.abandon(handle) }
        try store.restartFromZero(row.id, note: note, fingerprint: fingerprint, bytesTotal: fingerprint.size)
        let restarts = try store.countRestart(row.id)
        Log.info("upload \(row.id): \(note.message) (restart \(restarts))")
        return .retry(Classification(reason: note, restarts: restarts), progressed: true)
    }

    /// The whole file's hash when the server already held every byte (the agent died after
    /// the last chunk): only what the last checkpoint lacks is read, and nothing is sent.
    private func finishedHash(_ source: SourceFile, row: Transfer) throws -> String {
        let sha = try catchUpHash(source, checkpoint: row.checkpoint, to: source.size)
        counters.resumedAt = source.size
        try store.checkpoint(row.id, offset: source.size, hashState: sha.state, counters: counters, resetAttempts: false)
        return sha.hexDigest
    }

    /// After a refused creation or chunk: if the folder is gone, make it again (true) so the
    /// upload can end where it was asked to.
    func recreateMissingFolder(_ row: Transfer) throws -> Bool {
        serverInfo.forgetFolder(row.remoteFolder, of: Self.folderKey(account))
        guard try !dav.exists(row.remoteFolder) else { return false }
        try dav.makeFolders(row.remoteFolder)
        return true
    }
}
