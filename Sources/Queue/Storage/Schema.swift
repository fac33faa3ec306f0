/// The queue's schema, versioned with `PRAGMA user_version`. Each migration runs once, in
/// one transaction, in order; a database newer than this program is refused, not damaged.
public enum Schema {
    static let migrations: [String] = [
        // 1: accounts, transfers, agent state.
        """
        CREATE TABLE accounts (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            webdav_url TEXT NOT NULL,
            tus_url TEXT NOT NULL,
            username TEXT NOT NULL,
            wifi_only INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE transfers (
            id INTEGER PRIMARY KEY,
            direction TEXT NOT NULL CHECK (direction IN ('upload', 'download')),
            origin TEXT NOT NULL CHECK (origin IN ('manual', 'share', 'auto')),
            lane INTEGER NOT NULL,
            account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
            local_path BLOB NOT NULL,
            remote_path TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('queued', 'in_progress', 'retrying', 'completed', 'failed')),
            reason_code TEXT,
            reason_message TEXT,
            reason_action TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER,
            bytes_done INTEGER NOT NULL DEFAULT 0,
            bytes_total INTEGER NOT NULL DEFAULT 0,
            upload_url TEXT,
            upload_expires_at INTEGER,
            fp_device INTEGER,
            fp_inode INTEGER,
            fp_size INTEGER,
            fp_mtime_ns INTEGER,
            checkpoint_offset INTEGER NOT NULL DEFAULT 0,
            hash_state BLOB,
            sha256 TEXT,
            etag TEXT,
            cancel_requested INTEGER NOT NULL DEFAULT 0,
            ignore_rules INTEGER NOT NULL DEFAULT 0,
            watch_rule TEXT,
            resumed_at INTEGER NOT NULL DEFAULT 0,
            bytes_read INTEGER NOT NULL DEFAULT 0,
            bytes_hashed INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            started_at INTEGER,
            completed_at INTEGER
        );
        CREATE INDEX transfers_by_state ON transfers (state, direction, lane, id);
        CREATE TABLE agent_state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
        // 2: the queue view reads each group in order without sorting every row of it.
        """
        CREATE INDEX transfers_by_state_lane ON transfers (state, lane, id);
        CREATE INDEX transfers_by_state_completed ON transfers (state, completed_at, id);
        """,
        // 3: a reason's raw detail (the library's or server's own words) beside the sentence
        // shown; a CA bundle per account.
        """
        ALTER TABLE transfers ADD COLUMN reason_detail TEXT;
        ALTER TABLE accounts ADD COLUMN ca_file TEXT;
        """,
        // 4: an item's number is never given out again, even after `clear` (scripts keep
        // numbers): the transfers table is rebuilt with AUTOINCREMENT, rows and indexes kept.
        // Nothing refers to transfers, so dropping the old table breaks no foreign key.
        """
        CREATE TABLE transfers_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            direction TEXT NOT NULL CHECK (direction IN ('upload', 'download')),
            origin TEXT NOT NULL CHECK (origin IN ('manual', 'share', 'auto')),
            lane INTEGER NOT NULL,
            account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
            local_path BLOB NOT NULL,
            remote_path TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('queued', 'in_progress', 'retrying', 'completed', 'failed')),
            reason_code TEXT,
            reason_message TEXT,
            reason_action TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER,
            bytes_done INTEGER NOT NULL DEFAULT 0,
            bytes_total INTEGER NOT NULL DEFAULT 0,
            upload_url TEXT,
            upload_expires_at INTEGER,
            fp_device INTEGER,
            fp_inode INTEGER,
            fp_size INTEGER,
            fp_mtime_ns INTEGER,
            checkpoint_offset INTEGER NOT NULL DEFAULT 0,
            hash_state BLOB,
            sha256 TEXT,
            etag TEXT,
            cancel_requested INTEGER NOT NULL DEFAULT 0,
            ignore_rules INTEGER NOT NULL DEFAULT 0,
            watch_rule TEXT,
            resumed_at INTEGER NOT NULL DEFAULT 0,
            bytes_read INTEGER NOT NULL DEFAULT 0,
            bytes_hashed INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            started_at INTEGER,
            completed_at INTEGER,
            reason_detail TEXT
        );
        INSERT INTO transfers_new (id, direction, origin, lane, account_id, local_path, remote_path, state, reason_code, reason_message, reason_action,
            attempts, next_attempt_at, bytes_done, bytes_total, upload_url, upload_expires_at, fp_device, fp_inode, fp_size,
            fp_mtime_ns, checkpoint_offset, hash_state, sha256, etag, cancel_requested, ignore_rules, watch_rule, resumed_at,
            bytes_read, bytes_hashed, created_at, started_at, completed_at, reason_detail)
            SELECT id, direction, origin, lane, account_id, local_path, remote_path, state, reason_code, reason_message, reason_action,
            attempts, next_attempt_at, bytes_done, bytes_total, upload_url, upload_expires_at, fp_device, fp_inode, fp_size,
            fp_mtime_ns, checkpoint_offset, hash_state, sha256, etag, cancel_requested, ignore_rules, watch_rule, resumed_at,
            bytes_read, bytes_hashed, created_at, started_at, completed_at, reason_detail FROM transfers;
        DROP TABLE transfers;
        ALTER TABLE transfers_new RENAME TO transfers;
        CREATE INDEX transfers_by_state ON transfers (state, direction, lane, id);
        CREATE INDEX transfers_by_state_lane ON transfers (state, lane, id);
        CREATE INDEX transfers_by_state_completed ON transfers (state, completed_at, id);
        """,
        // 5: how often a row was started again from zero in a row (the backoff waits longer
        // after a few); uploads look up which rows are headed for one remote path.
        """
        ALTER TABLE transfers ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX transfers_by_remote_path ON transfers (account_id, remote_path);
        """,
        // 6: the person's pause of one row, kept through restarts; the few paused rows are
        // found through a partial index without reading every queued one.
        """
        ALTER TABLE transfers ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX transfers_paused ON transfers (state, id) WHERE paused = 1;
        """,
    ]

    public static var latest: Int { migrations.count }
}
