import Dispatch
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
    private let reader: LocalDriveReader
    private let stopped = Locked(false)

    /// How long a watch that could not start (out of inotify instances) waits to try again.
    static let retryDelay = 10.0

    /// Watches `paths.localDrive`; `wake` rings the agent when something was queued.
    public init(paths: XDGPaths, settleWindow: Duration = .seconds(SettleWindow.seconds), wake: @escaping @Sendable () -> Void) {
        let memory = TakenSet()
        self.memory = memory
        queuePath = paths.queueDatabase
        let reader = LocalDriveReader(path: paths.queueDatabase, root: LocalPath(paths.localDrive), memory: memory,
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
                // A walk of the tree is done (at the start, after events were lost): tracked
                // files it did not find went while nobody watched.
                if status.state == .watching || status.state == .scanningPeriodically, reader.lookForMissing(afterScans: status.scans) {
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
        lookAgain(at: path)
        start()
    }

    /// A new version of the file at `path` was made on the server, and is what Local Drive
    /// remembers of it now. A save made while it was sent, which the watcher left to that
    /// upload, is looked at again: one with other bytes goes next, as the new version of
    /// the one just made; one with the same bytes (a save without changes) is only
    /// remembered. An agent stopped before this looks at the next start, as at any edit
    /// made while it was stopped.
    public func versionSent(_ path: LocalPath) {
        lookAgain(at: path)
    }

    private func lookAgain(at path: LocalPath) {
        switch reader.remember(path) {
        case .gone: reader.endTrackingLater()
        case .changed: watcher.reconsider([path])
        case .asPlaced, .untracked: break
        }
    }

    /// A download has just put its file at `path`, which was free: a tracked file renamed
    /// away from it moments ago (a rename waiting to be followed) is followed now, before
    /// the download's tracking takes the name. The download's completion looks for it too
    /// (`QueueStore.noteLocalDrive`), but only as it was tracked: edited since the rename,
    /// it is found here, by the rename itself. (An editor's save by renaming the file away
    /// and writing anew, with the download landing between the two, is taken for a rename:
    /// the save then lands in the download's file.)
    ///
    /// The watcher knows the file from now on, as it was put there (`file`, as the download
    /// wrote or copied it, not looked at again: an edit made since stays news): a rename of it made
    /// after its row completed but before `downloaded` is told (the completion's own look
    /// has passed by then) is told as a rename, and followed. Unknown to the watcher, it
    /// was a new file settling under another name, and the download's name was empty when
    /// `downloaded` looked: the tracking ended, and the file's edits stayed here.
    public func placed(_ path: LocalPath, as file: FileFingerprint) {
        reader.followRenames(awayFrom: path)
        if path.isWithin(reader.root) { memory.insert(file, at: path) }
    }

    /// What may still go to the queue from Local Drive, in words: the folder not walked
    /// yet, a file there (an edit, a save looked at again) settling. Nil when nothing, or
    /// when not watching.
    public var arriving: String? { watcher.arriving }

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
