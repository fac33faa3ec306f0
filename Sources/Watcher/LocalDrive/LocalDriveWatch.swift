import Dispatch
import Glibc
import Platform
import Queue

/// Local Drive's side of the round trip: the download folder is watched like a camera
/// folder (a file is taken once it is still and nobody writes it), and a file that a
/// tracked download put there and that has changed since goes to the queue as the new
/// version of its server file. Everything else there is left alone: files made there by
/// hand, editors' temporaries and lock files, files deleted there (nothing is ever deleted
/// on the server). It watches only while a tracked file is there to watch: someone who
/// never downloads spends no inotify instance on it.
public final class LocalDriveWatch: Sendable {
    private let watcher: FolderWatcher
    private let queuePath: String
    private let memory: TakenSet
    private let reader: StoreReader
    private let stopped = Locked(false)

    /// How long a watch that could not start (out of inotify instances) waits to try again.
    static let retryDelay = 10.0

    /// Watches `paths.localDrive`; `wake` rings the agent when something was queued.
    public init(paths: XDGPaths, settleWindow: Duration = .seconds(SettleWindow.seconds), wake: @escaping @Sendable () -> Void) {
        let memory = TakenSet()
        self.memory = memory
        queuePath = paths.queueDatabase
        let reader = StoreReader(path: paths.queueDatabase, root: LocalPath(paths.localDrive), memory: memory,
                                 renameWindow: Double(settleWindow.components.seconds) * 2 + 2)
        self.reader = reader
        watcher = FolderWatcher(settings: WatcherSettings(folder: LocalPath(paths.localDrive), media: nil, settleWindow: settleWindow),
                                taken: memory) { event in
            switch event {
            case .found(let file):
                if reader.changed(file) { wake() }
            case .moved(let from, let to, _):
                // Followed once the window has passed, even if nothing else happens: a new
                // version waiting to be sent must follow its file.
                if reader.moved(from, to: to) {
                    DispatchQueue.global().asyncAfter(deadline: .now() + reader.renameWindow + 0.1) {
                        reader.followRenames(olderThan: reader.renameWindow)
                    }
                }
            case .exchanged(let a, let b):
                reader.exchanged(a, b)
            case .left(let path):
                if reader.left(path) { reader.endTrackingLater() }
            case .notTaken(let path, let error):
                Log.info("Local Drive: \(path.display) could not be read (\(error.reason)); an edit of it is looked at when it can be")
            case .status(let status):
                // The walk at the start is done: tracked files it did not find went while nobody watched.
                if status.state == .watching || status.state == .scanningPeriodically, reader.missingAtStart() {
                    reader.endTrackingLater()
                }
            case .problem:
                break
            }
        }
    }

    /// Starts watching if a tracked download is in Local Drive (when the agent starts, and
    /// after each download); does nothing otherwise, or when it already watches.
    public func start() {
        guard !watcher.isRunning, !stopped.withLock({ $0 }) else { return }
        guard let store = try? QueueStore(path: queuePath), let files = try? store.localDriveFiles(), !files.isEmpty else { return }
        // The tracked files as they were put there or last sent: only a change is news.
        for file in files { memory.insert(file.fingerprint, at: file.localPath) }
        do {
            try watcher.start()
        } catch {
            // Out of inotify instances, say: tried again, and a scan at the start finds what changed meanwhile.
            Log.warning("Local Drive: edits of downloaded files are not noticed yet (\(error)); trying again in \(Int(Self.retryDelay)) s")
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.retryDelay) { [weak self] in self?.start() }
        }
    }

    /// A download completed: the file it put at `path`, if its edits go back, is known as
    /// it was put there from now on, not only once the watcher has seen it settle: a
    /// rename, or a swap of names with another tracked file, made right after is then
    /// followed, not taken for a new file saved at the name. Starts watching if need be.
    ///
    /// Whatever happened at the name between the file being put there and the row
    /// completing is looked at now: a file gone from it (deleted or renamed in that moment)
    /// waits as a deleted one does, and one that changed (an edit the watcher saw settle
    /// before the file was tracked, and let go) is looked at again.
    public func downloaded(_ path: LocalPath) {
        switch reader.remember(path) {
        case .gone: reader.endTrackingLater()
        case .changed: watcher.reconsider([path])
        case .asPlaced, .untracked: break
        }
        start()
    }

    /// A download has just put its file at `path`, which was free: a tracked file renamed
    /// away from it moments ago (a rename waiting to be followed) is followed now, before
    /// the download's tracking takes the name. The download's completion looks for it too
    /// (`QueueStore.noteLocalDrive`), but only as it was tracked: edited since the rename,
    /// it is found here, by the rename itself. (An editor's save by renaming the file away
    /// and writing anew, with the download landing between the two, is taken for a rename:
    /// the save then lands in the download's file.)
    public func placed(_ path: LocalPath) {
        reader.followRenames(awayFrom: path)
    }

    public func stop() {
        stopped.withLock { $0 = true }
        watcher.stop()
        // The watcher's thread has ended: its renames still waiting are followed now. Files
        // deleted within the window keep their tracking (an editor's save may be half done);
        // the walk at the next start finds whether their names are still empty.
        reader.followRenames(olderThan: 0)
        reader.stopEnding()
    }
}

/// The watcher thread's queue connection and what it does with a settled file. Used on
/// that thread, and by the timer that follows renames once their window has passed: what
/// they share (the connection, the renames waiting) is one value under one lock.
private final class StoreReader: Sendable {
    private struct State {
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
        /// The tracked files missing from the first walk have been noted.
        var startChecked = false
        /// A look at `deleted` is due (one timer for all of them).
        var endPending = false
        /// The watch stopped: the deletions waiting stay for the next start to look at.
        var stopped = false
    }

    private struct Deletion {
        var at: Double
        var download: Int64
        /// The device the tracked file was on: a name whose folder is now on another (a
        /// mount point with nothing mounted) is not empty, only out of reach.
        var device: UInt64?
        /// Not found by the walk at the start of the watch (not told gone by the kernel).
        var atStart = false
    }

    /// A tracked file renamed, and the download whose file it was: if another download
    /// has put its file at the old name since, the queue followed the rename already
    /// (`QueueStore.noteLocalDrive`), and the tracking at the old name is that download's.
    private struct Rename {
        var from: LocalPath
        var to: LocalPath
        var at: Double
        var download: Int64
        /// The file it put at `to` (device and inode), so that a rename of that name later
        /// is known to be of this file, not of another the watcher tells of by its own memory.
        var file: FileIdentity?
    }

    private let state = Locked(State())
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
            for rename in state.renamed where rename.to.isWithin(path) {
                state.deleted[rename.to] = Deletion(at: now, download: rename.download, device: rename.file?.device)
                waiting = true
            }
            // Those a rename waiting takes out of `path` first are not gone.
            for file in (try? store.localDriveFiles(atOrBelow: path)) ?? []
            where !state.renamed.contains(where: { file.localPath.isWithin($0.from) && !$0.to.isWithin(path) }) {
                state.deleted[file.localPath] = Deletion(at: now, download: file.downloadID, device: file.fingerprint.device)
                waiting = true
            }
            return waiting
        }
    }

    /// The walk at the start of the watch is done: tracked files not at their names then
    /// were deleted, or renamed, while nobody watched; they wait as deleted ones do (those
    /// renamed are followed by the files found at their new names settling, or else found
    /// by `endTracking`'s own look). Once only; true when some wait.
    func missingAtStart() -> Bool {
        state.withLock { state in
            guard !state.startChecked, let store = open(&state), let files = try? store.localDriveFiles() else { return false }
            state.startChecked = true
            let now = MonotonicClock.seconds()
            var waiting = false
            for file in files where state.deleted[file.localPath] == nil
                && Self.nameIsEmpty(file.localPath, device: file.fingerprint.device) {
                state.deleted[file.localPath] = Deletion(at: now, download: file.downloadID, device: file.fingerprint.device, atStart: true)
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
                    if let (there, fingerprint) = found[name], FileFingerprint.ofRegularFile(notFollowing: there) == fingerprint {
                        // The file there is this one (by its whole fingerprint): a tracking
                        // there is of a file gone from it, and gives way.
                        if try store.moveLocalDrive(name, to: there, whileTrackedBy: deletion.download) {
                            memory.move(name, to: there)
                            Log.info("Local Drive: \(name.display) is at \(there.display) now; it keeps its own server file")
                        }
                    } else if let file = try store.forgetDeletedLocalDrive(name, download: deletion.download) {
                        let went = deletion.atStart ? "was not there when Local Drive's watch started (deleted, or renamed and changed while nobody watched)"
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
        guard !sought.isEmpty else { return found }
        var tree = FolderTree(links: .skipped)
        let memory = self.memory
        tree.skips = { folder, name in IgnoredNames.isIgnored(name, in: folder, remembered: memory) }
        tree.walk(root) { event in
            guard case .entry(let candidate, let st, _) = event, FileKind.of(mode: st.st_mode) == .regular,
                  let name = sought[FileFingerprint(st)], found[name] == nil, candidate != name else { return }
            found[name] = (candidate, FileFingerprint(st))
        }
        return found
    }

    /// The names of tracked files gone from a folder renamed from `folder` to `new` go with it.
    private static func rename(_ deleted: inout [LocalPath: Deletion], inFolder folder: LocalPath, to new: LocalPath) {
        deleted = Dictionary(deleted.map { name, deletion in
            (name.isWithin(folder) && name != folder ? name.moved(from: folder, to: new) : name, deletion)
        }, uniquingKeysWith: { _, later in later })
    }

    /// Whether nothing is at `name`: only a name the system says is not there, in a folder
    /// on the device the file was on (`device`, if known). One that cannot be looked at (no
    /// permission, a file system not answering), or whose folder is a mount point with
    /// nothing mounted on it now, may still hold the file.
    private static func nameIsEmpty(_ name: LocalPath, device: UInt64?) -> Bool {
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
    private func follow(_ state: inout State, where picked: (Rename) -> Bool) {
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
                try? store.moveLocalDrive(rename.from, to: rename.to, whileTrackedBy: rename.download)
            } else {
                let aside = chosen[0].from.standIn
                try? store.moveLocalDrive(chosen[0].from, to: aside, whileTrackedBy: chosen[0].download)
                chosen[0].from = aside
            }
        }
    }

    /// Whether the tracking at a waiting rename's old name is still its download's: once
    /// another download's is there, the queue followed it already (`QueueStore.noteLocalDrive`).
    private func isCurrent(_ rename: Rename, _ store: QueueStore) -> Bool {
        (try? store.localDriveFile(at: rename.from))?.downloadID == rename.download
    }

    private func open(_ state: inout State) -> QueueStore? {
        if let store = state.store { return store }
        state.store = try? QueueStore(path: path)
        return state.store
    }

    /// The tracked file at `path` as the queue knows it goes into the memory.
    /// What is at `path` as `remember` found it.
    enum AtName { case untracked, asPlaced, changed, gone }

    /// The tracked file at `path` as the queue knows it goes into the memory. One gone from
    /// the name already waits as a deleted one does; what is at the name otherwise is said.
    func remember(_ path: LocalPath) -> AtName {
        state.withLock { state in
            guard let file = try? open(&state)?.localDriveFile(at: path) else { return .untracked }
            memory.insert(file.fingerprint, at: file.localPath)
            if Self.nameIsEmpty(path, device: file.fingerprint.device) {
                state.deleted[path] = Deletion(at: MonotonicClock.seconds(), download: file.downloadID, device: file.fingerprint.device)
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
                return false
            }
            let (id, isNew) = try store.queueNewVersion(of: tracked, as: found.fingerprint)
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
            try? open(&state)?.moveLocalDrive(from, to: to)
            return false
        }
    }
}
