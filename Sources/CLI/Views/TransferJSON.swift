import Queue

/// One transfer for programs: each item of `queue --json`, and `show ID --json`.
///
/// Text is real text (file names are not escaped; bytes that are not UTF-8 become U+FFFD),
/// times are ISO 8601 in UTC, and every key is always present, `null` when it does not apply.
public struct TransferJSON: Codable, Sendable, Equatable {
    public var id: Int64
    public var direction: String
    public var origin: String
    public var state: String
    public var name: String
    /// Uploads: the local path. Downloads: the remote path.
    public var source: String
    /// Uploads: the remote path. Downloads: the local path (empty until a name is chosen).
    public var target: String
    public var account: String
    public var localPath: String
    public var remotePath: String
    public var bytesDone: Int64
    public var bytesTotal: Int64
    public var checkpointOffset: Int64
    public var attempts: Int
    public var reason: ReasonJSON?
    public var nextAttemptAt: String?
    public var createdAt: String
    public var startedAt: String?
    public var completedAt: String?
    public var uploadExpiresAt: String?
    /// Hex SHA-256 of the whole file, once known.
    public var sha256: String?
    /// The host of the tus upload URL; never the URL itself.
    public var uploadHost: String?
    public var cancelRequested: Bool
    /// The person paused it (`pause ID`): it waits until `resume ID`.
    public var paused: Bool
    public var watchRule: String?
    public var counters: CountersJSON
    /// Something the person should know that is not a reason, e.g. that the server stores the
    /// file under another name, or that a watch rule took it as it was after waiting for it
    /// to be finished (two such notes are joined by "; ").
    public var note: String?
    /// The server file this upload is a new version of (a downloaded file edited here).
    public var newVersionOf: String?
    /// True when that file had changed on the server, so this version went beside it.
    public var conflictedCopy: Bool

    public struct ReasonJSON: Codable, Sendable, Equatable {
        public var code: String
        public var message: String
        /// What the person can do, with `ID` replaced by the transfer's number.
        public var action: String
        /// The raw words behind the message (a library's error text, the server's reply), or null.
        public var detail: String?

        enum CodingKeys: String, CodingKey { case code, message, action, detail }

        /// Written by hand so an absent detail is `null`, not a missing key.
        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(code, forKey: .code)
            try c.encode(message, forKey: .message)
            try c.encode(action, forKey: .action)
            try c.encode(detail, forKey: .detail)
        }
    }

    public struct CountersJSON: Codable, Sendable, Equatable {
        /// The byte offset the current run started from.
        public var resumedAt: Int64
        public var bytesRead: Int64
        public var bytesHashed: Int64

        enum CodingKeys: String, CodingKey {
            case resumedAt = "resumed_at"
            case bytesRead = "bytes_read"
            case bytesHashed = "bytes_hashed"
        }
    }

    enum CodingKeys: String, CodingKey {
        case id, direction, origin, state, name, source, target, account, attempts, reason, sha256, counters, note, paused
        case localPath = "local_path"
        case remotePath = "remote_path"
        case bytesDone = "bytes_done"
        case bytesTotal = "bytes_total"
        case checkpointOffset = "checkpoint_offset"
        case nextAttemptAt = "next_attempt_at"
        case createdAt = "created_at"
        case startedAt = "started_at"
        case completedAt = "completed_at"
        case uploadExpiresAt = "upload_expires_at"
        case uploadHost = "upload_host"
        case cancelRequested = "cancel_requested"
        case watchRule = "watch_rule"
        case newVersionOf = "new_version_of"
        case conflictedCopy = "conflicted_copy"
    }

    /// The JSON form of one row.
    public init(_ t: Transfer) {
        id = t.id
        direction = t.direction.rawValue
        origin = t.origin.rawValue
        state = t.state.rawValue
        name = t.plainName
        account = t.accountName
        localPath = t.localPath.text
        remotePath = t.remotePath
        source = t.direction == .upload ? localPath : remotePath
        target = t.direction == .upload ? remotePath : localPath
        bytesDone = t.bytesDone
        bytesTotal = t.bytesTotal
        checkpointOffset = t.checkpoint.offset
        attempts = t.attempts
        reason = t.reason.map { ReasonJSON(code: $0.code.rawValue, message: $0.message, action: t.actionText($0), detail: $0.detail) }
        nextAttemptAt = t.nextAttemptAt.map(HumanFormat.iso8601)
        createdAt = HumanFormat.iso8601(t.createdAt)
        startedAt = t.startedAt.map(HumanFormat.iso8601)
        completedAt = t.completedAt.map(HumanFormat.iso8601)
        uploadExpiresAt = t.uploadExpiresAt.map(HumanFormat.iso8601)
        sha256 = t.sha256
        uploadHost = t.uploadHost
        cancelRequested = t.cancelRequested
        paused = t.paused
        watchRule = t.watchRule
        counters = CountersJSON(resumedAt: t.counters.resumedAt, bytesRead: t.counters.bytesRead,
                                bytesHashed: t.counters.bytesHashed)
        note = t.notes.isEmpty ? nil : t.notes.joined(separator: "; ")
        newVersionOf = t.newVersionOf
        conflictedCopy = t.newVersionOf.map { $0 != t.remotePath } ?? false
    }

    /// Written by hand so optional fields are `null`, not missing keys.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(direction, forKey: .direction)
        try c.encode(origin, forKey: .origin)
        try c.encode(state, forKey: .state)
        try c.encode(name, forKey: .name)
        try c.encode(source, forKey: .source)
        try c.encode(target, forKey: .target)
        try c.encode(account, forKey: .account)
        try c.encode(localPath, forKey: .localPath)
        try c.encode(remotePath, forKey: .remotePath)
        try c.encode(bytesDone, forKey: .bytesDone)
        try c.encode(bytesTotal, forKey: .bytesTotal)
        try c.encode(checkpointOffset, forKey: .checkpointOffset)
        try c.encode(attempts, forKey: .attempts)
        try c.encode(reason, forKey: .reason)
        try c.encode(nextAttemptAt, forKey: .nextAttemptAt)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(startedAt, forKey: .startedAt)
        try c.encode(completedAt, forKey: .completedAt)
        try c.encode(uploadExpiresAt, forKey: .uploadExpiresAt)
        try c.encode(sha256, forKey: .sha256)
        try c.encode(uploadHost, forKey: .uploadHost)
        try c.encode(cancelRequested, forKey: .cancelRequested)
        try c.encode(paused, forKey: .paused)
        try c.encode(watchRule, forKey: .watchRule)
        try c.encode(counters, forKey: .counters)
        try c.encode(note, forKey: .note)
        try c.encode(newVersionOf, forKey: .newVersionOf)
        try c.encode(conflictedCopy, forKey: .conflictedCopy)
    }

    /// Written by hand as `JSONOutput.encode` writes it (see `PrettyJSON`), for `queue
    /// --json`; keys in sorted order.
    func write(to json: inout PrettyJSON) {
        json.openObject()
        json.key("account"); json.string(account)
        json.key("attempts"); json.int(attempts)
        json.key("bytes_done"); json.int(bytesDone)
        json.key("bytes_total"); json.int(bytesTotal)
        json.key("cancel_requested"); json.bool(cancelRequested)
        json.key("checkpoint_offset"); json.int(checkpointOffset)
        json.key("completed_at"); json.string(completedAt)
        json.key("conflicted_copy"); json.bool(conflictedCopy)
        json.key("counters")
        json.openObject()
        json.key("bytes_hashed"); json.int(counters.bytesHashed)
        json.key("bytes_read"); json.int(counters.bytesRead)
        json.key("resumed_at"); json.int(counters.resumedAt)
        json.closeObject()
        json.key("created_at"); json.string(createdAt)
        json.key("direction"); json.string(direction)
        json.key("id"); json.int(id)
        json.key("local_path"); json.string(localPath)
        json.key("name"); json.string(name)
        json.key("new_version_of"); json.string(newVersionOf)
        json.key("next_attempt_at"); json.string(nextAttemptAt)
        json.key("note"); json.string(note)
        json.key("origin"); json.string(origin)
        json.key("paused"); json.bool(paused)
        json.key("reason")
        if let reason {
            json.openObject()
            json.key("action"); json.string(reason.action)
            json.key("code"); json.string(reason.code)
            json.key("detail"); json.string(reason.detail)
            json.key("message"); json.string(reason.message)
            json.closeObject()
        } else {
            json.null()
        }
        json.key("remote_path"); json.string(remotePath)
        json.key("sha256"); json.string(sha256)
        json.key("source"); json.string(source)
        json.key("started_at"); json.string(startedAt)
        json.key("state"); json.string(state)
        json.key("target"); json.string(target)
        json.key("upload_expires_at"); json.string(uploadExpiresAt)
        json.key("upload_host"); json.string(uploadHost)
        json.key("watch_rule"); json.string(watchRule)
        json.closeObject()
    }
}
