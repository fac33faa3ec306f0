import Dispatch
import Platform
import Queue

/// The watcher thread's queue connection and what it does with a settled file, a rename,
/// and a file gone (`LocalDriveReader+Gone.swift`). Used on that thread, by the timers that
/// follow renames and look at files gone once their window has passed, and by downloads:
/// what they share (the connection, the renames waiting, the files gone) is one value
/// under one lock.
final class LocalDriveReader: Sendable {
    struct State {
        var store: QueueStore?
        /// Tracked files renamed within Local Drive, not followed yet. Editors that keep a
        /// backup save by renaming the file away (`f` to `f___jb_old___`, `f.blend` to
        /// `f.blend1`) and their new file into its name: a file settling at the old name
        /// within `renameWindow` is that save, and the tracking stays with the name.
        /// Otherwise the rename is followed (when the window has passed and anything
        /// happens, when either name settles, or when the watch stops).
        var renamed: [Rename] = []
        /// Tracked files deleted, by the name their tracking is at, and when: a file made at
        /// the name within `renameWindow` is an editor's save by writing anew, and the edit.
        /// Otherwise the tracking ends: a file saved there weeks later is another file, and
        /// would go over the server's as its new version.
        var deleted: [LocalPath: Deletion] = [:]
        /// The watcher's walks of the tree after which missing tracked files were looked for.
        var scansSeen = 0
        /// A look at `deleted` is due (one timer for all of them).
        var endPending = false
        /// The watch stopped: the deletions waiting stay for the next start to look at.
        var stopped = false
    }

    /// A tracked file renamed, and the download whose file it was: if another download
    /// has put its file at the old name since, the queue followed the rename already
    /// (`QueueStore.noteLocalDrive`), and the tracking at the old name is that download's.
    struct Rename {
        var from: LocalPath
        var to: LocalPath
        var at: Double
        var download: Int64
        /// The file it put at `to` (device and inode), so that a rename of that name later
        /// is known to be of this file, not of another the watcher tells of by its own memory.
        var file: FileIdentity?
    }

    let state = Locked(State())
    let path: String
    /// Local Drive itself.
    let root: LocalPath
    let memory: TakenSet
    let renameWindow: Double

    init(path: String, root: LocalPath, memory: TakenSet, renameWindow: Double) {
        self.path = path
        self.root = root
        self.memory = memory
        self.renameWindow = renameWindow
    }

    /// Follows the renames waiting longer than `age` seconds.
    func followRenames(olderThan age: Double) {
        state.withLock { followDue(&$0, olderThan: age) }
    }

    /// Follows the renames waiting away from `path` now.
    func followRenames(awayFrom path: LocalPath) {
        state.withLock { follow(&$0) { $0.from == path } }
    }

    private func followDue(_ state: inout State, olderThan age: Double) {
        let now = MonotonicClock.seconds()
        follow(&state) { now - $0.at >= age }
    }

    /// Before a file at `path` is looked at: a rename away from it within the window is an
    /// editor's save into the name (not followed); one onto it is followed now.
    private func settleRenames(_ state: inout State, at path: LocalPath) {
        followDue(&state, olderThan: renameWindow)
        state.renamed.removeAll { $0.from == path }
        follow(&state) { $0.to == path }
    }

    /// Follows the renames waiting that `picked` picks, and forgets them. One that lands on
    /// the old name of another (picked or not) goes after it; names rotated through a
    /// temporary one (`mv a t; mv b a; mv t b`) go through a stand-in name, as a swap does.
    func follow(_ state: inout State, where picked: (Rename) -> Bool) {
        var chosen = state.renamed.filter(picked)
        guard !chosen.isEmpty else { return }
        state.renamed.removeAll(where: picked)
        // A rename away from a name a chosen one lands on goes now too, first.
        while let next = state.renamed.firstIndex(where: { waiting in chosen.contains { $0.to == waiting.from } }) {
            chosen.append(state.renamed.remove(at: next))
        }
        guard let store = open(&state) else { return }
        chosen.removeAll { !isCurrent($0, store) }
        while !chosen.isEmpty {
            if let next = chosen.firstIndex(where: { rename in !chosen.contains { $0.from == rename.to } }) {
                let rename = chosen.remove(at: next)
                _ = try? store.moveLocalDrive(rename.from, to: rename.to, whileTrackedBy: rename.download)
            } else {
                // Every rename from that name goes from the stand-in: stand-ins are no
                // rename's target, so each turn frees a name and the cycle ends.
                let old = chosen[0].from, aside = old.standIn
                _ = try? store.moveLocalDrive(old, to: aside, whileTrackedBy: chosen[0].download)
                for i in chosen.indices where chosen[i].from == old { chosen[i].from = aside }
            }
        }
    }

    /// Whether the tracking at a waiting rename's old name is still its download's: once
    /// another download's is there, the queue followed it already (`QueueStore.noteLocalDrive`).
    private func isCurrent(_ rename: Rename, _ store: QueueStore) -> Bool {
        (try? store.localDriveFile(at: rename.from))?.downloadID == rename.download
    }

    func open(_ state: inout State) -> QueueStore? {
        if let store = state.store { return store }
        state.store = try? QueueStore(path: path)
        return state.store
    }

    /// What is at `path` as `remember` found it.
    enum AtName { case untracked, asPlaced, changed, gone }

    /// The tracked file at `path` as the queue knows it goes into the memory. One gone from
    /// the name already waits as a deleted one does; what is at the name otherwise is said.
    func remember(_ path: LocalPath) -> AtName {
        state.withLock { state in
            guard let file = try? open(&state)?.localDriveFile(at: path) else { return .untracked }
            memory.insert(file.fingerprint, at: file.localPath)
            if Self.nameIsEmpty(path, device: file.fingerprint.device) {
                state.deleted[path] = Deletion(of: file, at: MonotonicClock.seconds())
                return .gone
            }
            return FileFingerprint.ofRegularFile(notFollowing: path) == file.fingerprint ? .asPlaced : .changed
        }
    }

    /// A settled file: true when it was queued as a new version.
    func changed(_ found: FoundFile) -> Bool {
        state.withLock { take(&$0, found) }
    }

    private func take(_ state: inout State, _ found: FoundFile) -> Bool {
        guard let store = open(&state) else {
            Log.warning("Local Drive: the queue database cannot be opened; \(found.path.display) is looked at again when it changes")
            return false
        }
        settleRenames(&state, at: found.path)
        do {
            try followArrival(store, found)
            guard let tracked = try store.localDriveFile(at: found.path) else { return false }
            memory.insert(found.fingerprint, at: found.path)
            guard tracked.fingerprint != found.fingerprint else { return false }
            // The same bytes under a new time (a touch, a save without changes): nothing to send.
            if let sha = ContentHash.sha256(of: found.path, expecting: found.fingerprint), sha == tracked.sha256 {
                try store.acknowledgeLocalDrive(found.path, fingerprint: found.fingerprint)
                Log.info("Local Drive: \(found.path.display) was saved with the bytes it had; nothing to send")
                return false
            }
            let (id, isNew) = try store.queueNewVersion(of: tracked, as: found.fingerprint, takenNote: found.takenAsItIs)
            Log.info("Local Drive: \(found.path.display) changed; " + (isNew ? "queued as #\(id)" : "#\(id) takes it")
                     + ", the new version of \(tracked.remotePath)")
            return true
        } catch {
            Log.warning("Local Drive: \(found.path.display) changed but could not be queued (\(error)); it is looked at again when it changes")
            return false
        }
    }

    /// A tracked file that arrived at its name through a name the watcher leaves out (`mv a
    /// a.tmp; mv a.tmp c`, or two names rotated through one) was not told as a rename: it
    /// is known by its whole fingerprint (as tracked, or as its edit has it) at the name it
    /// left, and its tracking follows it. If the file now at that name is the one tracked
    /// here, the two traded names. Taken as a new file at the name instead, it would go to
    /// the server as the new version of the file tracked there.
    private func followArrival(_ store: QueueStore, _ found: FoundFile) throws {
        guard let origin = try store.localDrivePath(of: found.fingerprint, otherThan: found.path) else { return }
        let there = FileFingerprint.ofRegularFile(notFollowing: origin)
        if there == found.fingerprint { return }  // the same file under both names: a hard link
        if let there {
            guard try store.localDrivePath(of: there, otherThan: origin) == found.path else { return }
            try store.exchangeLocalDrive(origin, found.path)
            Log.info("Local Drive: \(origin.display) and \(found.path.display) traded names (through a name that is not followed); each keeps its own")
        } else {
            try store.moveLocalDrive(origin, to: found.path)
            Log.info("Local Drive: \(origin.display) was renamed to \(found.path.display) (through a name that is not followed); it keeps its own")
        }
    }

    /// Two files swapped names (`mv --exchange`): each keeps its tracking under its new
    /// name at once. The renames waiting onto or away from either name are followed
    /// first: none of them may later land on a name the swap gave to another file.
    func exchanged(_ a: LocalPath, _ b: LocalPath) {
        state.withLock { state in
            memory.exchange(a, b)
            LocalPath.exchange(a, b) { Self.rename(&state.deleted, inFolder: $0, to: $1) }
            followDue(&state, olderThan: renameWindow)
            follow(&state) { rename in [a, b].contains { rename.from.isWithin($0) || rename.to.isWithin($0) } }
            do {
                try open(&state)?.exchangeLocalDrive(a, b)
            } catch {
                Log.warning("Local Drive: \(a.display) and \(b.display) swapped names, which could not be recorded (\(error)); edits of either may go back as the other's")
            }
        }
    }

    /// A tracked file renamed within Local Drive stays the same file (a folder's files too),
    /// unless a file settles at its old name soon after (`renamed`). True when the rename
    /// waits to be followed.
    ///
    /// A file tracked at `from` that is still there as it was put there was not renamed: the
    /// file told of is one a download took the name of (found at `to` afterwards), and the
    /// download's completion followed it there already (`QueueStore.noteLocalDrive`).
    ///
    /// A name a waiting rename gave, or a folder it lies in, renamed again (renamed twice,
    /// renamed back, the new folder named): the waiting rename goes on to where its file is
    /// now, and one back onto its own name is undone; if the file moved is the one that
    /// rename put at the name (by device and inode), not one the watcher knew there before.
    func moved(_ from: LocalPath, to: LocalPath) -> Bool {
        state.withLock { state in
            followDue(&state, olderThan: renameWindow)
            if let store = open(&state) { state.renamed.removeAll { !isCurrent($0, store) } }
            let tracked = try? open(&state)?.localDriveFile(at: from)
            if let tracked, FileFingerprint.ofRegularFile(notFollowing: from) == tracked.fingerprint { return false }
            memory.move(from, to: to)
            // Tracked files gone from a folder renamed: their names went with it.
            Self.rename(&state.deleted, inFolder: from, to: to)
            let moving = FileFingerprint.ofRegularFile(notFollowing: to)?.identity
            let onward = moving != nil && state.renamed.contains { $0.to == from && $0.file == moving }
            for i in state.renamed.indices {
                let rename = state.renamed[i]
                if rename.from.isWithin(from), rename.from != from { state.renamed[i].from = rename.from.moved(from: from, to: to) }
                if rename.to.isWithin(from), rename.to != from || onward { state.renamed[i].to = rename.to.moved(from: from, to: to) }
            }
            state.renamed.removeAll { $0.from == $0.to }
            if onward { return true }
            if let tracked {
                state.renamed.append(Rename(from: from, to: to, at: MonotonicClock.seconds(), download: tracked.downloadID, file: moving))
                return true
            }
            _ = try? open(&state)?.moveLocalDrive(from, to: to)
            return false
        }
    }
}
