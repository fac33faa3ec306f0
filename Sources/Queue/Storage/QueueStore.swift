import Glibc
import Platform

/// The durable queue. Every process opens its own; the SQLite file is the source of truth.
///
/// Threads may share one (see `Database`): the agent's transfers use the scheduler's.
public final class QueueStore: Sendable {
    public let database: Database

    /// Opens the queue at `path` (creating its folder 0700), migrating the schema.
    public init(path: String) throws(QueueError) {
        let folder = LocalPath(path).parent.text
        do { try PrivateFolder.prepare(folder, role: .state) } catch {
            throw QueueError("the " + error.message, action: error.action)
        }
        let existed = FileIO.exists(path)
        do {
            database = try Database(path: path)
            // Only a file that is new or already ours is changed (mode, journal, schema).
            try Self.checkOwnership(database)
            chmod(path, 0o600)
            try database.enableWAL()
            try Self.migrate(database)
        } catch let error as DatabaseError {
            if error.isCorrupt { throw QueueError.damaged(path: path, underlying: error) }
            if error.isBusy { throw QueueError.busy(path: path, underlying: error) }
            throw QueueError("cannot open the queue database \(path): \(error.message)",
                             action: existed ? "check its permissions" : "check that \(folder) is writable", underlying: error)
        } catch let error as QueueError {
            throw error
        } catch {
            throw QueueError("cannot open the queue database \(path): \(error)")
        }
    }

    /// Refuses another program's SQLite file before anything in it is touched.
    static func checkOwnership(_ db: Database) throws {
        let tables = Set(try db.query("SELECT name FROM sqlite_master WHERE type = 'table'") { $0.text(0) })
        let version = try db.userVersion
        if tables.isEmpty && version == 0 { return } // new
        guard tables.isSuperset(of: ["accounts", "transfers", "agent_state"]) else {
            throw QueueError("\(db.path) is a database, but not instant-upload's queue",
                             action: "move it aside (mv \"\(db.path)\" \"\(db.path).foreign\") and run the command again")
        }
    }

    static func migrate(_ db: Database) throws {
        let version = try db.userVersion
        if version > Schema.latest {
            throw QueueError("the queue database \(db.path) was made by a newer instant-upload (schema \(version), this one knows \(Schema.latest))",
                             action: "update instant-upload, or move the file aside to start an empty queue")
        }
        guard version < Schema.latest else { return }
        try db.transaction {
            // Re-read inside the write lock: another process may have migrated meanwhile.
            let current = try db.userVersion
            for index in current..<Schema.latest {
                try db.execute(Schema.migrations[index])
                try db.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }

    // MARK: Accounts

    /// Adds an account, or changes the one with that name (its rows stay).
    @discardableResult
    public func addAccount(name: String, webdavURL: String, tusURL: String?, username: String, wifiOnly: Bool = false,
                           caFile: String? = nil, server: ServerProfile = ServerProfile()) throws -> Account {
        let now = nowMilliseconds()
        let columns: [(String, SQLValue)] = [
            ("webdav_url", .text(webdavURL)), ("tus_url", .text(tusURL ?? "")), ("username", .text(username)),
            ("wifi_only", .int(wifiOnly ? 1 : 0)), ("ca_file", .optionalText(caFile)),
            ("server_kind", .text(server.kind.rawValue)), ("server_product", .optionalText(server.product)),
            ("server_version", .optionalText(server.version)), ("base_url", .optionalText(server.baseURL)),
            ("upload_protocol", .text(server.uploadMethod.rawValue)), ("uploads_url", .optionalText(server.uploadsURL)),
            ("user_id", .optionalText(server.userID)), ("put_via_temporary", .int(server.putViaTemporary ? 1 : 0)),
            ("max_chunk_size", .optionalInt(server.maxChunkSize)),
        ]
        try database.transaction(durable: true) {
            _ = try database.run("""
                INSERT INTO accounts (name, created_at, \(columns.map(\.0).joined(separator: ", ")))
                VALUES (?, ?, \(columns.map { _ in "?" }.joined(separator: ", ")))
                ON CONFLICT(name) DO UPDATE SET \(columns.map { "\($0.0) = excluded.\($0.0)" }.joined(separator: ", "))
                """, [.text(name), .int(now)] + columns.map(\.1))
        }
        guard let account = try account(named: name) else { throw QueueError("the account \(name) vanished while it was saved") }
        return account
    }

    static let accountColumns = """
        id, name, webdav_url, tus_url, username, wifi_only, created_at, ca_file, server_kind, server_product, server_version,
        base_url, upload_protocol, uploads_url, user_id, put_via_temporary, max_chunk_size
        """

    public func accounts() throws -> [Account] {
        try database.query("SELECT \(Self.accountColumns) FROM accounts ORDER BY name", row: Self.account)
    }

    public func account(named name: String) throws -> Account? {
        try database.query("SELECT \(Self.accountColumns) FROM accounts WHERE name = ?", [.text(name)], row: Self.account).first
    }

    public func account(id: Int64) throws -> Account? {
        try database.query("SELECT \(Self.accountColumns) FROM accounts WHERE id = ?", [.int(id)], row: Self.account).first
    }

    static func account(_ r: Row) throws -> Account {
        let tus = try r.text("tus_url")
        // A kind or protocol this program does not know (a newer one wrote it) reads as
        // what every account was before: tus beside WebDAV.
        let server = try ServerProfile(
            kind: ServerProfile.Kind(rawValue: r.text("server_kind")) ?? .webdav, product: r.optionalText("server_product"),
            version: r.optionalText("server_version"), baseURL: r.optionalText("base_url"),
            uploadMethod: ServerProfile.UploadMethod(rawValue: r.text("upload_protocol")) ?? .tus,
            uploadsURL: r.optionalText("uploads_url"), userID: r.optionalText("user_id"), putViaTemporary: r.bool("put_via_temporary"),
            maxChunkSize: r.optionalInt64("max_chunk_size"))
        return try Account(id: r.int64("id"), name: r.text("name"), webdavURL: r.text("webdav_url"), tusURL: tus.isEmpty ? nil : tus,
                           username: r.text("username"), wifiOnly: r.bool("wifi_only"), createdAt: r.int64("created_at"),
                           caFile: r.optionalText("ca_file"), server: server)
    }

    // MARK: Enqueue

    /// Writes all `items` in one transaction, before any network call, and returns their ids.
    /// While the person has paused the whole queue, new rows say so from the start.
    @discardableResult
    public func enqueue(_ items: [NewTransfer]) throws -> [Int64] {
        guard !items.isEmpty else { return [] }
        let now = nowMilliseconds()
        return try database.transaction(durable: true) {
            var ids: [Int64] = []
            ids.reserveCapacity(items.count)
            let held: Reason? = try isQueuePaused() ? .queuePaused : nil
            let note: [SQLValue] = [.optionalText(held?.code.rawValue), .optionalText(held?.message), .optionalText(held?.action)]
            for item in items {
                try database.run("""
                    INSERT INTO transfers (direction, origin, lane, account_id, local_path, remote_path, state, bytes_total,
                        fp_device, fp_inode, fp_size, fp_mtime_ns, queued_ctime_ns, ignore_rules, watch_rule, created_at, new_version_of,
                        replaces_etag, track_edits, taken_note, reason_code, reason_message, reason_action)
                    VALUES (?, ?, ?, ?, ?, ?, \(TransferState.queued.sql), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [
                        .text(item.direction.rawValue), .text(item.origin.rawValue), .int(item.origin.lane), .int(item.accountID),
                        .blob(item.localPath.bytes), .text(item.remotePath), .int(item.bytesTotal),
                    ] + FileFingerprint.columnValues(item.fingerprint) + [.optionalInt(item.changeTime),
                        .int(item.ignoreRules ? 1 : 0), .optionalText(item.watchRule), .int(now),
                        .optionalText(item.newVersion ? item.remotePath : nil), .optionalText(item.replacesETag),
                        .int(item.tracksEdits ? 1 : 0), .optionalText(item.takenNote),
                    ] + note)
                ids.append(database.lastInsertRowID)
            }
            return ids
        }
    }

    // MARK: Reading

    /// The transfers table's columns as `Transfer` reads them, each under its own name
    /// (`AS`, since SQLite does not promise a name for `t.x` otherwise), plus the account's name.
    static let transferColumns = [
        "id", "direction", "origin", "account_id", "local_path", "remote_path", "state", "reason_code", "reason_message",
        "reason_action", "reason_detail", "attempts", "next_attempt_at", "bytes_done", "bytes_total", "upload_url",
        "upload_expires_at", "fp_device", "fp_inode", "fp_size", "fp_mtime_ns", "checkpoint_offset", "hash_state", "sha256",
        "etag", "cancel_requested", "ignore_rules", "watch_rule", "resumed_at", "bytes_read", "bytes_hashed", "created_at",
        "started_at", "completed_at", "paused", "finishing", "verified_at", "new_version_of", "replaces_etag", "version_etag",
        "taken_note",
    ]

    static let columns = (transferColumns.map { "t.\($0) AS \($0)" } + ["a.name AS account_name"]).joined(separator: ", ")

    /// Where each column `transfer(_:)` reads is in a statement's rows, found by name once per
    /// statement and kept with it: a listing of thousands of rows then reads each row by place
    /// (looking every column of every row up by name was a tenth of `queue`'s time), and a
    /// query may still list the columns in any order.
    struct TransferLayout {
        let id, direction, origin, accountID, accountName, localPath, remotePath, state: Int32
        let reasonCode, reasonMessage, reasonAction, reasonDetail, attempts, nextAttemptAt, bytesDone, bytesTotal: Int32
        let uploadURL, uploadExpiresAt, fpDevice, fpInode, fpSize, fpMtime, checkpointOffset, hashState: Int32
        let sha256, etag, cancelRequested, ignoreRules, watchRule, resumedAt, bytesRead, bytesHashed: Int32
        let createdAt, startedAt, completedAt, paused, finishing, verifiedAt, newVersionOf, replacesETag: Int32
        let versionETag, takenNote: Int32

        init(_ r: Row) throws(DatabaseError) {
            id = try r.column("id")
            direction = try r.column("direction")
            origin = try r.column("origin")
            accountID = try r.column("account_id")
            accountName = try r.column("account_name")
            localPath = try r.column("local_path")
            remotePath = try r.column("remote_path")
            state = try r.column("state")
            reasonCode = try r.column("reason_code")
            reasonMessage = try r.column("reason_message")
            reasonAction = try r.column("reason_action")
            reasonDetail = try r.column("reason_detail")
            attempts = try r.column("attempts")
            nextAttemptAt = try r.column("next_attempt_at")
            bytesDone = try r.column("bytes_done")
            bytesTotal = try r.column("bytes_total")
            uploadURL = try r.column("upload_url")
            uploadExpiresAt = try r.column("upload_expires_at")
            fpDevice = try r.column("fp_device")
            fpInode = try r.column("fp_inode")
            fpSize = try r.column("fp_size")
            fpMtime = try r.column("fp_mtime_ns")
            checkpointOffset = try r.column("checkpoint_offset")
            hashState = try r.column("hash_state")
            sha256 = try r.column("sha256")
            etag = try r.column("etag")
            cancelRequested = try r.column("cancel_requested")
            ignoreRules = try r.column("ignore_rules")
            watchRule = try r.column("watch_rule")
            resumedAt = try r.column("resumed_at")
            bytesRead = try r.column("bytes_read")
            bytesHashed = try r.column("bytes_hashed")
            createdAt = try r.column("created_at")
            startedAt = try r.column("started_at")
            completedAt = try r.column("completed_at")
            paused = try r.column("paused")
            finishing = try r.column("finishing")
            verifiedAt = try r.column("verified_at")
            newVersionOf = try r.column("new_version_of")
            replacesETag = try r.column("replaces_etag")
            versionETag = try r.column("version_etag")
            takenNote = try r.column("taken_note")
        }
    }

    /// A row of `SELECT \(columns)`.
    static func transfer(_ r: Row) throws -> Transfer {
        let at = try r.layout(TransferLayout.init)
        var reason: Reason?
        if let code = r.optionalText(at.reasonCode) {
            reason = Reason(ReasonCode(rawValue: code) ?? .protocol, r.optionalText(at.reasonMessage),
                            action: r.optionalText(at.reasonAction), detail: r.optionalText(at.reasonDetail))
        }
        let fingerprint = r.isNull(at.fpDevice) ? nil
            : FileFingerprint(device: UInt64(bitPattern: r.int64(at.fpDevice)), inode: UInt64(bitPattern: r.int64(at.fpInode)),
                              size: r.int64(at.fpSize), mtimeNanoseconds: r.int64(at.fpMtime))
        return Transfer(
            id: r.int64(at.id), direction: Direction(rawValue: r.text(at.direction)) ?? .upload,
            origin: Origin(rawValue: r.text(at.origin)) ?? .manual, accountID: r.int64(at.accountID),
            accountName: r.text(at.accountName), localPath: LocalPath(bytes: r.blob(at.localPath)), remotePath: r.text(at.remotePath),
            state: TransferState(rawValue: r.text(at.state)) ?? .failed, reason: reason, attempts: r.int(at.attempts),
            nextAttemptAt: r.optionalInt64(at.nextAttemptAt), bytesDone: r.int64(at.bytesDone), bytesTotal: r.int64(at.bytesTotal),
            uploadURL: r.optionalText(at.uploadURL), uploadExpiresAt: r.optionalInt64(at.uploadExpiresAt), fingerprint: fingerprint,
            checkpoint: Checkpoint(offset: r.int64(at.checkpointOffset), hashState: r.optionalBlob(at.hashState)),
            sha256: r.optionalText(at.sha256), etag: r.optionalText(at.etag), cancelRequested: r.int(at.cancelRequested) != 0,
            ignoreRules: r.int(at.ignoreRules) != 0, watchRule: r.optionalText(at.watchRule),
            counters: ResumeCounters(resumedAt: r.int64(at.resumedAt), bytesRead: r.int64(at.bytesRead),
                                     bytesHashed: r.int64(at.bytesHashed)),
            createdAt: r.int64(at.createdAt), startedAt: r.optionalInt64(at.startedAt), completedAt: r.optionalInt64(at.completedAt),
            paused: r.int(at.paused) != 0, finishing: r.int(at.finishing) != 0, verifiedAt: r.optionalInt64(at.verifiedAt),
            newVersionOf: r.optionalText(at.newVersionOf), replacesETag: r.optionalText(at.replacesETag),
            versionETag: r.optionalText(at.versionETag), takenNote: r.optionalText(at.takenNote))
    }

    public func transfer(id: Int64) throws -> Transfer? {
        try database.query("SELECT \(Self.columns) FROM transfers t JOIN accounts a ON a.id = t.account_id WHERE t.id = ?",
                           [.int(id)], row: Self.transfer).first
    }

    /// Rows in one state (or all), in the order the scheduler takes them (completed ones
    /// newest first), at most `limit`.
    ///
    /// One state of both directions is read from the index on (state, direction, lane, id)
    /// once per direction, and the two runs merged in order, so the first rows of a long
    /// group come without sorting the group.
    public func transfers(state: TransferState? = nil, direction: Direction? = nil, limit: Int? = nil) throws -> [Transfer] {
        try database.query(Self.transfersSQL(state: state, direction: direction, limit: limit), row: Self.transfer)
    }

    /// As `transfers`, each row handed to `body` as it is read and let go after: a view of
    /// a hundred thousand rows holds only what it prints.
    public func eachTransfer(state: TransferState? = nil, direction: Direction? = nil, _ body: (Transfer) throws -> Void) throws {
        try database.query(Self.transfersSQL(state: state, direction: direction, limit: nil)) { try body(try Self.transfer($0)) }
    }

    /// The largest ID among the rows in `state` (nil for none): how wide the ID column of
    /// their list is, known before the first row.
    public func largestID(state: TransferState) throws -> Int64? {
        try database.query("SELECT max(id) FROM transfers WHERE state = \(state.sql)") { $0.optionalInt64(0) }.first ?? nil
    }

    private static func transfersSQL(state: TransferState?, direction: Direction?, limit: Int?) -> String {
        let columns = "SELECT \(Self.columns), t.lane AS lane FROM transfers t"
        let select = columns + " JOIN accounts a ON a.id = t.account_id"
        let limited = limit.map { " LIMIT \($0)" } ?? ""
        switch (state, direction) {
        case (.completed?, _):
            // Completed rows have an index of their own, in finishing order; named, because
            // without statistics the planner prefers the one on state and sorts them all.
            return columns + " INDEXED BY transfers_completed JOIN accounts a ON a.id = t.account_id"
                + " WHERE t.state = \(TransferState.completed.sql)" + (direction.map { " AND t.direction = '\($0.rawValue)'" } ?? "")
                + " ORDER BY t.completed_at DESC, t.id DESC" + limited
        case (let state?, let direction?):
            return select + " WHERE t.state = \(state.sql) AND t.direction = '\(direction.rawValue)' ORDER BY lane, id" + limited
        case (let state?, nil):
            return "SELECT * FROM (" + Direction.allCases.map { "\(select) WHERE t.state = \(state.sql) AND t.direction = '\($0.rawValue)'" }
                .joined(separator: " UNION ALL ") + ") ORDER BY lane, id" + limited
        case (nil, let direction):
            return select + (direction.map { " WHERE t.direction = '\($0.rawValue)'" } ?? "") + " ORDER BY lane, id" + limited
        }
    }

    // MARK: Agent state

    public func agentValue(_ key: String) throws -> String? {
        try database.query("SELECT value FROM agent_state WHERE key = ?", [.text(key)]) { $0.text(0) }.first
    }

    public func setAgentValue(_ key: String, _ value: String?) throws {
        if let value {
            try database.run("INSERT INTO agent_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [.text(key), .text(value)])
        } else {
            try database.run("DELETE FROM agent_state WHERE key = ?", [.text(key)])
        }
    }
}

/// What a front door hands the queue.
public struct NewTransfer: Sendable {
    public var direction: Direction
    public var origin: Origin
    public var accountID: Int64
    public var localPath: LocalPath
    public var remotePath: String
    public var bytesTotal: Int64
    public var fingerprint: FileFingerprint?
    public var ignoreRules: Bool
    public var watchRule: String?
    /// Uploads: a new version of the file at `remotePath` (see `Transfer.newVersionOf`),
    /// replacing it only while it has the ETag `replacesETag`.
    public var newVersion: Bool
    public var replacesETag: String?
    /// Downloads: edits of the file go back to the server as its new versions.
    public var tracksEdits: Bool
    /// Uploads: the file's `st_ctime` (nanoseconds, the file system's clock) from the same
    /// look as `fingerprint` (see `QueueStore.queuedChangeTime`).
    public var changeTime: Int64?
    /// Uploads a watch rule or Local Drive queued: see `Transfer.takenNote`.
    public var takenNote: String?

    public init(direction: Direction, origin: Origin, accountID: Int64, localPath: LocalPath, remotePath: String,
                bytesTotal: Int64 = 0, fingerprint: FileFingerprint? = nil, changeTime: Int64? = nil, ignoreRules: Bool = false,
                watchRule: String? = nil, replacesETag: String? = nil, newVersion: Bool = false, tracksEdits: Bool = false,
                takenNote: String? = nil) {
        self.direction = direction; self.origin = origin; self.accountID = accountID; self.localPath = localPath
        self.remotePath = remotePath; self.bytesTotal = bytesTotal; self.fingerprint = fingerprint; self.changeTime = changeTime
        self.ignoreRules = ignoreRules; self.watchRule = watchRule
        self.newVersion = newVersion || replacesETag != nil; self.replacesETag = replacesETag; self.tracksEdits = tracksEdits
        self.takenNote = takenNote
    }
}

/// Counts derived from the rows, for the one-line status.
public struct QueueSummary: Sendable, Equatable {
    public var counts: [Direction: [TransferState: Int]] = [:]
    /// What holds the whole queue: `paused` (the person), `offline`, `disk_full`, or nil.
    public var pausedReason: String?
    /// Queued rows the person paused one by one.
    public var pausedRows: Int

    public init(counts: [Direction: [TransferState: Int]] = [:], pausedReason: String? = nil, pausedRows: Int = 0) {
        self.counts = counts
        self.pausedReason = pausedReason
        self.pausedRows = pausedRows
    }

    public func count(_ state: TransferState, _ direction: Direction? = nil) -> Int {
        if let direction { return counts[direction]?[state] ?? 0 }
        return Direction.allCases.reduce(0) { $0 + (counts[$1]?[state] ?? 0) }
    }

    public func total(_ direction: Direction? = nil) -> Int {
        TransferState.allCases.reduce(0) { $0 + count($1, direction) }
    }

    /// Rows a person has to act on.
    public var needAttention: Int { count(.failed) }

    /// Rows that wait for an agent to move them: queued, running or retrying, and not held by
    /// the person's pause (those wait for the person).
    public var waitingForAgent: Int {
        if pausedReason == ReasonCode.paused.rawValue { return 0 }
        return max(0, count(.queued) + count(.inProgress) + count(.retrying) - pausedRows)
    }
}
