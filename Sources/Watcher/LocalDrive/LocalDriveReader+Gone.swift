import Dispatch
import Glibc
import Platform
import Queue

/// Tracked files that left their names: deleted, moved to the trash or out of Local Drive.
/// A file made at the name within the window is an editor's save by writing anew, and the
/// edit; otherwise the file is looked for elsewhere in Local Drive (renamed while nobody
/// watched, a second name a hard link left), and if it is nowhere its tracking ends, so
/// that a file saved at the name weeks later is not sent over the server's file.
extension LocalDriveReader {
    struct Deletion {
        var at: Double
        var download: Int64
        /// The device the tracked file was on: a name whose folder is now on another (a
        /// mount point with nothing mounted) is not empty, only out of reach.
        var device: UInt64?
        /// Not found when the tree was walked (not told gone by the kernel).
        var unseen = false
    }

    /// A file or folder left `path` (deleted, moved out of Local Drive, to the trash, or to
    /// a name the watcher leaves out). The tracked files that were there, at their names or
    /// where a rename waiting to be followed puts them, stop being tracked unless a file is
    /// at their names once the window has passed, or they are found elsewhere then
    /// (`endTracking`): true when any wait so. A rename waiting onto the name stays: an
    /// editor that saves by renaming the file to a backup name and writing anew (vim, Emacs)
    /// makes a file there again, and the rename is followed onto it.
    func left(_ path: LocalPath) -> Bool {
        state.withLock { state in
            guard let store = open(&state) else { return false }
            let now = MonotonicClock.seconds()
            var waiting = false
            // Those a rename waiting takes out of `path` first are not gone.
            for file in (try? store.localDriveFiles(atOrBelow: path)) ?? []
            where !state.renamed.contains(where: { file.localPath.isWithin($0.from) && !$0.to.isWithin(path) }) {
                state.deleted[file.localPath] = Deletion(of: file, at: now)
                waiting = true
            }
            // A rename waiting onto a name there puts its file's tracking there (over the one
            // there, renamed over): that is the file gone from it.
            for rename in state.renamed where rename.to.isWithin(path) {
                state.deleted[rename.to] = Deletion(at: now, download: rename.download, device: rename.file?.device)
                waiting = true
            }
            return waiting
        }
    }

    /// The watcher walked the tree again (`scans` walks so far: at the start of the watch,
    /// after the kernel's queue overflowed and events were lost, periodically while out of
    /// watches): tracked files not at their names went while nobody watched (deleted, or
    /// renamed); they wait as deleted ones do (those renamed are followed by the files found
    /// at their new names settling, or else found by `endTracking`'s own look). True when
    /// some wait.
    func lookForMissing(afterScans scans: Int) -> Bool {
        state.withLock { state in
            guard scans > state.scansSeen, let store = open(&state), let files = try? store.localDriveFiles() else { return false }
            state.scansSeen = scans
            let now = MonotonicClock.seconds()
            var waiting = false
            for file in files where state.deleted[file.localPath] == nil
                && Self.nameIsEmpty(file.localPath, device: file.fingerprint.device) {
                state.deleted[file.localPath] = Deletion(of: file, at: now, unseen: true)
                waiting = true
            }
            return waiting
        }
    }

    /// The watch stopped: no tracking ends from now on.
    func stopEnding() {
        state.withLock { $0.stopped = true }
    }

    /// Runs `endTracking` once the window has passed, and again while deletions wait.
    func endTrackingLater() {
        guard state.withLock({ state in
            defer { state.endPending = true }
            return !state.endPending
        }) else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + renameWindow + 0.1) { [self] in
            endTracking(olderThan: renameWindow)
            let more = state.withLock { state in
                state.endPending = false
                return !state.deleted.isEmpty && !state.stopped
            }
            if more { endTrackingLater() }
        }
    }

    /// The tracked files gone longer than `age` seconds ago whose names are still empty: each
    /// found elsewhere in Local Drive as it was last sent or as an edit waiting has it (renamed
    /// while nobody watched, or told late; a second name a hard link left) is followed there;
    /// the others are no longer tracked, and their edits still waiting went with them. The
    /// walk that looks for them runs without the lock (the watcher's thread, a download's
    /// completion, wait on it); what it found is checked again before it is acted on.
    func endTracking(olderThan age: Double) {
        let (gone, sought): ([LocalPath: Deletion], [FileFingerprint: LocalPath]) = state.withLock { state in
            guard !state.stopped, let store = open(&state) else { return ([:], [:]) }
            let now = MonotonicClock.seconds()
            let due = state.deleted.filter { now - $0.value.at >= age }
            // A rename waiting onto a name gone goes there first: its tracking ends there.
            follow(&state) { rename in due.keys.contains { rename.to.isWithin($0) } }
            var gone: [LocalPath: Deletion] = [:]
            var sought: [FileFingerprint: LocalPath] = [:]
            for (name, deletion) in due {
                guard Self.nameIsEmpty(name, device: deletion.device), !renamedAway(state, name) else {
                    state.deleted[name] = nil
                    continue
                }
                // Not known now: left to wait, and looked at again.
                guard let fingerprints = try? store.trackedFingerprints(at: name) else { continue }
                gone[name] = deletion
                for fingerprint in fingerprints { sought[fingerprint] = name }
            }
            return (gone, sought)
        }
        guard !gone.isEmpty else { return }
        let found = find(sought)
        state.withLock { state in
            guard !state.stopped, let store = open(&state) else { return }
            for (name, deletion) in gone where state.deleted[name]?.at == deletion.at {
                state.deleted[name] = nil
                guard Self.nameIsEmpty(name, device: deletion.device), !renamedAway(state, name) else { continue }
                do {
                    if let (there, fingerprint) = found[name], FileFingerprint.ofRegularFile(notFollowing: there) != fingerprint {
                        // Changed since the walk found it (edited, renamed again): looked for again.
                        state.deleted[name] = deletion
                    } else if let (there, _) = found[name] {
                        // The file there is this one (by its whole fingerprint): a tracking
                        // there is of a file gone from it, and gives way.
                        if try store.moveLocalDrive(name, to: there, whileTrackedBy: deletion.download) {
                            memory.move(name, to: there)
                            Log.info("Local Drive: \(name.display) is at \(there.display) now; it keeps its own server file")
                        }
                    } else if let file = try store.forgetDeletedLocalDrive(name, download: deletion.download) {
                        let went = deletion.unseen ? "was not there when Local Drive looked (deleted, or renamed and changed, while nobody watched)"
                            : "is gone (deleted, or moved out of Local Drive)"
                        Log.info("Local Drive: \(name.display) \(went); its edits no longer go back to \(file.remotePath), and a file saved at its name from now on is a new file, never sent")
                    }
                } catch {
                    Log.warning("Local Drive: \(name.display) is gone, which could not be recorded (\(error)); a file saved at its name may still go back as its new version")
                }
            }
        }
    }

    /// Where in Local Drive the files `sought` (whole fingerprints, each of a tracked name)
    /// are, by that name, with the fingerprint found: one walk for all of them, through the
    /// names the watcher watches.
    private func find(_ sought: [FileFingerprint: LocalPath]) -> [LocalPath: (LocalPath, FileFingerprint)] {
        var found: [LocalPath: (LocalPath, FileFingerprint)] = [:]
        var tree = FolderTree(links: .skipped)
        let memory = self.memory
        tree.skips = { folder, name in IgnoredNames.isIgnored(name, in: folder, remembered: memory) }
        // A file still at the name it is sought for is not found elsewhere: the walk looks on.
        for file in tree.files(in: root, matching: Set(sought.keys), except: { path, fingerprint in sought[fingerprint] == path }) {
            guard let name = sought[file.fingerprint], found[name] == nil else { continue }
            found[name] = (file.path, file.fingerprint)
        }
        return found
    }

    /// The names of tracked files gone from a folder renamed from `folder` to `new` go with it.
    static func rename(_ deleted: inout [LocalPath: Deletion], inFolder folder: LocalPath, to new: LocalPath) {
        deleted = Dictionary(deleted.map { name, deletion in
            (name.isWithin(folder) && name != folder ? name.moved(from: folder, to: new) : name, deletion)
        }, uniquingKeysWith: { _, later in later })
    }

    /// Whether nothing is at `name`: only a name the system says is not there, in a folder
    /// on the device the file was on (`device`, if known). One that cannot be looked at (no
    /// permission, a file system not answering), or whose folder is a mount point with
    /// nothing mounted on it now, may still hold the file.
    static func nameIsEmpty(_ name: LocalPath, device: UInt64?) -> Bool {
        do throws(SystemError) {
            _ = try FileIO.linkStatus(name)
            return false
        } catch {
            guard error.errno == ENOENT || error.errno == ENOTDIR else { return false }
        }
        guard let device else { return true }
        var folder = name.parent
        while true {
            if let there = try? FileFingerprint.of(folder) { return there.device == device }
            let up = folder.parent
            if up == folder { return true }
            folder = up
        }
    }

    /// Whether a rename waiting to be followed takes the file at `name` (or its folder) away.
    private func renamedAway(_ state: State, _ name: LocalPath) -> Bool {
        state.renamed.contains { name.isWithin($0.from) }
    }
}

extension LocalDriveReader.Deletion {
    /// The tracked `file` gone at `at` (an extension, so that the memberwise init stays).
    init(of file: LocalDriveFile, at: Double, unseen: Bool = false) {
        self.init(at: at, download: file.downloadID, device: file.fingerprint.device, unseen: unseen)
    }
}
