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
        // 6: instant upload's memory. Per watch rule: the folder its memory is about, when
        // the files already there were set aside as its baseline, and how its watcher
        // stands (for `watch list` and `status`); and every file the rule took, by
        // fingerprint and, once known, SHA-256, so that nothing is sent twice across
        // restarts. The rows of a rule go with it.
        """
        CREATE TABLE watch_rules (
            id TEXT PRIMARY KEY,
            folder BLOB NOT NULL,
            baseline_at INTEGER,
            created_at INTEGER NOT NULL,
            state TEXT,
            troubles TEXT,
            watched_folders INTEGER NOT NULL DEFAULT 0,
            overflows INTEGER NOT NULL DEFAULT 0,
            scans INTEGER NOT NULL DEFAULT 0,
            status_at INTEGER
        );
        CREATE TABLE watch_taken (
            id INTEGER PRIMARY KEY,
            rule TEXT NOT NULL REFERENCES watch_rules(id) ON DELETE CASCADE,
            path BLOB NOT NULL,
            fp_device INTEGER NOT NULL,
            fp_inode INTEGER NOT NULL,
            fp_size INTEGER NOT NULL,
            fp_mtime_ns INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('upload', 'baseline', 'duplicate')),
            sha256 TEXT,
            transfer_id INTEGER,
            taken_at INTEGER NOT NULL,
            uploaded_at INTEGER,
            after_upload_done INTEGER NOT NULL DEFAULT 0
        );
        CREATE UNIQUE INDEX watch_taken_by_path ON watch_taken (rule, path);
        CREATE INDEX watch_taken_by_size ON watch_taken (rule, fp_size);
        CREATE INDEX watch_taken_by_transfer ON watch_taken (transfer_id);
        CREATE INDEX transfers_by_watch_rule ON transfers (watch_rule, state);
        """,
        // 7: what each account's server is and how files go up to it (found by discovery).
        // Accounts from before were all tus + WebDAV; tus_url stays NOT NULL, '' for none.
        """
        ALTER TABLE accounts ADD COLUMN server_kind TEXT NOT NULL DEFAULT 'webdav';
        ALTER TABLE accounts ADD COLUMN server_product TEXT;
        ALTER TABLE accounts ADD COLUMN server_version TEXT;
        ALTER TABLE accounts ADD COLUMN base_url TEXT;
        ALTER TABLE accounts ADD COLUMN upload_protocol TEXT NOT NULL DEFAULT 'tus';
        ALTER TABLE accounts ADD COLUMN uploads_url TEXT;
        ALTER TABLE accounts ADD COLUMN user_id TEXT;
        ALTER TABLE accounts ADD COLUMN put_via_temporary INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE accounts ADD COLUMN max_chunk_size INTEGER;
        """,
        // 8: the person's pause of one row, kept through restarts; the few paused rows are
        // found through a partial index without reading every queued one.
        """
        ALTER TABLE transfers ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX transfers_paused ON transfers (state, id) WHERE paused = 1;
        """,
        // 9: an upload about to make its file on the server says so first (its name, size and
        // SHA-256 are the row's own columns), so a kill inside the finishing request is
        // recognised on restart; and when the server last showed the finished file at its
        // name with the right size (and checksum, where it reports one), which is what
        // moving the original to the trash relies on.
        """
        ALTER TABLE transfers ADD COLUMN finishing INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE transfers ADD COLUMN verified_at INTEGER;
        """,
        // 10: Local Drive's round trip. An upload that is a new version of a file on the
        // server (a downloaded file edited here) names it, and the version (ETag) it may
        // replace; a row whose target is no longer that file went beside it as a conflicted
        // copy. A download says whether edits of it go back (`track_edits`); the server's
        // ETag of the version a row downloaded or made (`version_etag`); each file a tracked
        // download put in place is remembered with where it came from, the server's version,
        // and the local file as it was put there or last sent.
        """
        ALTER TABLE transfers ADD COLUMN new_version_of TEXT;
        ALTER TABLE transfers ADD COLUMN replaces_etag TEXT;
        ALTER TABLE transfers ADD COLUMN track_edits INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE transfers ADD COLUMN version_etag TEXT;
        CREATE TABLE local_drive (
            local_path BLOB PRIMARY KEY,
            account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
            remote_path TEXT NOT NULL,
            etag TEXT,
            fp_device INTEGER NOT NULL,
            fp_inode INTEGER NOT NULL,
            fp_size INTEGER NOT NULL,
            fp_mtime_ns INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            download_id INTEGER NOT NULL
        );
        CREATE INDEX transfers_new_versions ON transfers (local_path) WHERE new_version_of IS NOT NULL;
        """,
        // 11: a watch rule's side of "once, and nothing lost". The path a file being uploaded
        // was renamed to, which only the agent writes into the row (`moved_to`); the upload
        // a second copy of the same content waits on (sent itself when that one fails or
        // goes away); and why an original stayed instead of going to the trash.
        """
        ALTER TABLE transfers ADD COLUMN moved_to BLOB;
        CREATE INDEX transfers_moved ON transfers (id) WHERE moved_to IS NOT NULL;
        ALTER TABLE watch_taken ADD COLUMN waits_on INTEGER;
        ALTER TABLE watch_taken ADD COLUMN kept_reason TEXT;
        CREATE INDEX watch_taken_waiting ON watch_taken (rule, waits_on) WHERE waits_on IS NOT NULL;
        """,
        // 12: running counts and sums of the rows, so `status` and the agent read a few
        // hundred small rows instead of the whole table (see QueueStore+Tally.swift). Kept by
        // triggers, in the transaction that changes the rows; per 1,024 IDs (`bucket`), by
        // direction, state, reason and pause, so a batch's sums read whole buckets and
        // at most 1,024 rows of their own. And the few rows a person asked to cancel, which
        // the agent looks for at every turn, found without reading a long backlog.
        """
        CREATE INDEX transfers_cancel_requested ON transfers (id) WHERE cancel_requested = 1;
        CREATE TABLE transfer_tally (
            bucket INTEGER NOT NULL,
            direction TEXT NOT NULL,
            state TEXT NOT NULL,
            reason_code TEXT NOT NULL,
            paused INTEGER NOT NULL,
            files INTEGER NOT NULL,
            bytes_total INTEGER NOT NULL,
            bytes_done INTEGER NOT NULL,
            bytes_left INTEGER NOT NULL,
            PRIMARY KEY (bucket, direction, state, reason_code, paused)
        ) WITHOUT ROWID;
        INSERT INTO transfer_tally
            SELECT id >> 10, direction, state, coalesce(reason_code, ''), paused, count(*), total(bytes_total), total(bytes_done),
                   total(max(bytes_total - bytes_done, 0))
            FROM transfers GROUP BY 1, 2, 3, 4, 5;
        CREATE TRIGGER transfer_tally_insert AFTER INSERT ON transfers BEGIN
            \(tallyPutIn)
        END;
        CREATE TRIGGER transfer_tally_delete AFTER DELETE ON transfers BEGIN
            \(tallyTakeOut)
        END;
        CREATE TRIGGER transfer_tally_update AFTER UPDATE OF direction, state, reason_code, paused, bytes_total, bytes_done ON transfers BEGIN
            \(tallyTakeOut)
            \(tallyPutIn)
        END;
        """,
        // 13: fewer index entries rewritten at every step of a transfer. A row's state
        // changes at least twice per file; each index that holds the state gets an entry
        // taken out and put back each time, a page or two of the log per commit. The queue
        // view's (state, lane, id) is read from (state, direction, lane, id), one direction
        // after the other, merged; completed rows, read only newest first or by finishing
        // time, are indexed once, when they complete; rows of no watch rule are not indexed
        // by rule.
        """
        DROP INDEX transfers_by_state_lane;
        DROP INDEX transfers_by_state_completed;
        CREATE INDEX transfers_completed ON transfers (completed_at, id) WHERE state = 'completed';
        DROP INDEX transfers_by_watch_rule;
        CREATE INDEX transfers_by_watch_rule ON transfers (watch_rule, state) WHERE watch_rule IS NOT NULL;
        """,
        // 14: the tally is written only when a value it counts changed. A row updated with a
        // column the tally watches set to what it was (an upload recording the file it is
        // about to make, with the size it was queued with) took a row of the tally out and
        // put it back: one more page for the log at every small photo.
        """
        DROP TRIGGER transfer_tally_update;
        CREATE TRIGGER transfer_tally_update AFTER UPDATE OF direction, state, reason_code, paused, bytes_total, bytes_done ON transfers
        WHEN old.direction IS NOT new.direction OR old.state IS NOT new.state OR old.reason_code IS NOT new.reason_code
          OR old.paused IS NOT new.paused OR old.bytes_total IS NOT new.bytes_total OR old.bytes_done IS NOT new.bytes_done
        BEGIN
            \(tallyTakeOut)
            \(tallyPutIn)
        END;
        """,
        // 15: the gate that holds a queued row (a watch rule, the account's Wi-Fi flag, an
        // account whose password cannot be read), written once when the scheduler finds
        // it shut and cleared when it opens (`QueueStore+Hold.swift`), and the rows ready
        // to start in their own index. The scheduler reads the ready rows in order, so
        // 50,000 photos waiting for Wi-Fi cost it nothing per file that goes meanwhile.
        """
        ALTER TABLE transfers ADD COLUMN held_by TEXT;
        CREATE INDEX transfers_ready ON transfers (direction, lane, id)
            WHERE state = 'queued' AND paused = 0 AND cancel_requested = 0 AND held_by IS NULL;
        CREATE INDEX transfers_held ON transfers (held_by, reason_code) WHERE held_by IS NOT NULL;
        """,
        // 16: the retrying rows by the time of their next try, and only those. The scheduler
        // reads the ones whose time has come and the next time to wake up at, each pass,
        // without walking every retrying row; a thousand files failing each on its own then
        // cost it nothing per pass.
        """
        CREATE INDEX transfers_retrying ON transfers (next_attempt_at) WHERE state = 'retrying';
        """,
        // 17: folders seen as mount points while a rule watched them, with the device seen
        // there. A card unmounted from a fixed mount point leaves an empty folder behind;
        // this is how its photos are known to wait for it, after a restart as well.
        """
        CREATE TABLE mount_points (
            folder BLOB NOT NULL,
            device INTEGER NOT NULL,
            seen_at INTEGER NOT NULL,
            PRIMARY KEY (folder, device)
        ) WITHOUT ROWID;
        """,
        // 18: the file's own change time (st_ctime) when a watch rule queued it. Before its
        // original goes to the trash, the file system's clock alone then says whether anything
        // touched the file since (see `WatchWorker.mayHaveBeenWritten`); the queue's clock,
        // which a NAS's may run behind, could not.
        """
        ALTER TABLE transfers ADD COLUMN queued_ctime_ns INTEGER;
        """,
        // 19: the files a rule's watcher holds back (still open for writing, not whole), as
        // JSON beside its troubles, for `watch list` and `status`.
        """
        ALTER TABLE watch_rules ADD COLUMN waiting TEXT;
        """,
        // 20: why a watch rule (or Local Drive) took a file as it was after waiting for it to
        // be finished (a photo that stayed cut short, one a program kept open), shown with the row.
        """
        ALTER TABLE transfers ADD COLUMN taken_note TEXT;
        """,
        // 21: `status` names the batch's files taken as they were without reading the batch.
        """
        CREATE INDEX transfers_taken_note ON transfers (id) WHERE taken_note IS NOT NULL;
        """,
    ]

    public static var latest: Int { migrations.count }

    /// The tally's two steps for one row, as its triggers run them: counting the row as it
    /// is now (`new`), and taking out what it counted before (`old`). Migrations 12 and 14
    /// both make triggers of them, so a change here needs a migration of its own that makes
    /// the triggers again.
    private static let tallyPutIn = """
        INSERT INTO transfer_tally VALUES (new.id >> 10, new.direction, new.state, coalesce(new.reason_code, ''), new.paused, 1,
                                           new.bytes_total, new.bytes_done, max(new.bytes_total - new.bytes_done, 0))
        ON CONFLICT DO UPDATE SET files = files + 1, bytes_total = bytes_total + excluded.bytes_total,
                                  bytes_done = bytes_done + excluded.bytes_done, bytes_left = bytes_left + excluded.bytes_left;
        """
    private static let tallyTakeOut = """
        UPDATE transfer_tally SET files = files - 1, bytes_total = bytes_total - old.bytes_total, bytes_done = bytes_done - old.bytes_done,
                                  bytes_left = bytes_left - max(old.bytes_total - old.bytes_done, 0)
        WHERE bucket = old.id >> 10 AND direction = old.direction AND state = old.state AND reason_code = coalesce(old.reason_code, '')
          AND paused = old.paused;
        """
}
