import Platform

/// One row of the queue, as the store reads it.
public struct Transfer: Sendable, Equatable {
    public var id: Int64
    public var direction: Direction
    public var origin: Origin
    public var accountID: Int64
    public var accountName: String
    /// Uploads: the file to send. Downloads: the final file, once a name is chosen.
    public var localPath: LocalPath
    /// Uploads: where the file goes, e.g. `/Photos/IMG_0042.jpg`. Downloads: what is fetched.
    public var remotePath: String
    public var state: TransferState
    public var reason: Reason?
    public var attempts: Int
    public var nextAttemptAt: Int64?
    public var bytesDone: Int64
    public var bytesTotal: Int64
    public var uploadURL: String?
    public var uploadExpiresAt: Int64?
    public var fingerprint: FileFingerprint?
    public var checkpoint: Checkpoint
    public var sha256: String?
    public var etag: String?
    public var cancelRequested: Bool
    /// The person paused it (`pause ID`): it waits, whatever else allows, until resumed.
    public var paused: Bool
    public var ignoreRules: Bool
    public var watchRule: String?
    public var counters: ResumeCounters
    public var createdAt: Int64
    public var startedAt: Int64?
    public var completedAt: Int64?
    /// An upload recorded the file it is about to make (`remotePath`, `bytesTotal`, `sha256`)
    /// before the request that makes it: after a kill, the server is asked what is there.
    public var finishing: Bool
    /// When the server last showed the uploaded file at its name with the right size (and
    /// checksum, where it reports one); nil when that check failed or could not be made, or
    /// was not made because nothing relied on it (see `UploadJob.mustCheckMadeFile`).
    public var verifiedAt: Int64?
    /// An upload that is a new version of a file on the server (a downloaded file edited
    /// here): that file's path. While `remotePath` is that path, the upload replaces it only
    /// while the server still has the version `replacesETag`; once it is another path, the
    /// server's copy had changed and this version went beside it as a conflicted copy.
    public var newVersionOf: String?
    public var replacesETag: String?
    /// The server's ETag of the version this row downloaded, or made (an upload).
    public var versionETag: String?
    /// Uploads a watch rule or Local Drive queued: why the file was taken as it was after
    /// waiting for it to be finished (`FoundFile.takenAsItIs`), so the person knows the copy
    /// may be damaged or not whole.
    public var takenNote: String?

    public init(id: Int64, direction: Direction, origin: Origin = .manual, accountID: Int64 = 1, accountName: String = "",
                localPath: LocalPath, remotePath: String, state: TransferState = .queued, reason: Reason? = nil,
                attempts: Int = 0, nextAttemptAt: Int64? = nil, bytesDone: Int64 = 0, bytesTotal: Int64 = 0,
                uploadURL: String? = nil, uploadExpiresAt: Int64? = nil, fingerprint: FileFingerprint? = nil,
                checkpoint: Checkpoint = Checkpoint(), sha256: String? = nil, etag: String? = nil,
                cancelRequested: Bool = false, ignoreRules: Bool = false, watchRule: String? = nil,
                counters: ResumeCounters = ResumeCounters(), createdAt: Int64 = 0, startedAt: Int64? = nil,
                completedAt: Int64? = nil, paused: Bool = false, finishing: Bool = false, verifiedAt: Int64? = nil,
                newVersionOf: String? = nil, replacesETag: String? = nil, versionETag: String? = nil, takenNote: String? = nil) {
        self.id = id; self.direction = direction; self.origin = origin; self.accountID = accountID
        self.accountName = accountName; self.localPath = localPath; self.remotePath = remotePath; self.state = state
        self.reason = reason; self.attempts = attempts; self.nextAttemptAt = nextAttemptAt; self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal; self.uploadURL = uploadURL; self.uploadExpiresAt = uploadExpiresAt
        self.fingerprint = fingerprint; self.checkpoint = checkpoint; self.sha256 = sha256; self.etag = etag
        self.cancelRequested = cancelRequested; self.ignoreRules = ignoreRules; self.watchRule = watchRule
        self.counters = counters; self.createdAt = createdAt; self.startedAt = startedAt; self.completedAt = completedAt
        self.paused = paused; self.finishing = finishing; self.verifiedAt = verifiedAt
        self.newVersionOf = newVersionOf; self.replacesETag = replacesETag; self.versionETag = versionETag
        self.takenNote = takenNote
    }

    /// The name a person recognises.
    public var name: String {
        direction == .upload ? localPath.lastComponent.display : DisplayText.escape(remoteName)
    }

    /// The last part of the remote path, as the server names the file: after the last `/`
    /// byte, as `remoteFolder` ends before it.
    public var remoteName: String {
        let bytes = remotePath.utf8
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == UInt8(ascii: "/") { end = bytes.index(before: end) }
        let start = bytes[..<end].lastIndex(of: UInt8(ascii: "/")).map(bytes.index(after:)) ?? bytes.startIndex
        return start < end ? String(remotePath[start..<end]) : remotePath
    }

    /// What the request that makes this upload's file may replace: the version it is a new
    /// version of, while it still goes to that file's path; else nothing.
    public var replaceable: String? {
        guard let of = newVersionOf, of == remotePath else { return nil }
        return replacesETag
    }

    /// The remote folder, e.g. `/Photos`: up to the last `/` byte, as the server splits the
    /// path (a name starting with a combining mark makes one character of it and its slash).
    public var remoteFolder: String {
        guard let slash = remotePath.utf8.lastIndex(of: UInt8(ascii: "/")), slash != remotePath.startIndex else { return "/" }
        return String(remotePath[..<slash])
    }
}

/// A point the transfer can resume from: bytes confirmed and the hash state that covers them.
public struct Checkpoint: Sendable, Equatable {
    public var offset: Int64
    public var hashState: [UInt8]?
    public init(offset: Int64 = 0, hashState: [UInt8]? = nil) {
        self.offset = offset
        self.hashState = hashState
    }
}

/// What the current run of a transfer has read and hashed since it (re)started, so that a
/// resume can be shown to touch only what was left.
public struct ResumeCounters: Sendable, Equatable, Codable {
    public var resumedAt: Int64 = 0
    public var bytesRead: Int64 = 0
    public var bytesHashed: Int64 = 0
    public init(resumedAt: Int64 = 0, bytesRead: Int64 = 0, bytesHashed: Int64 = 0) {
        self.resumedAt = resumedAt; self.bytesRead = bytesRead; self.bytesHashed = bytesHashed
    }
}
