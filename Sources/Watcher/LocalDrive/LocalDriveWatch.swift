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
    private let stopped = Locked(false)

    /// How long a watch that could not start (out of inotify instances) waits to try again.
    static let retryDelay = 10.0

    /// Watches `paths.localDrive`; `wake` rings the agent when something was queued.
    public init(paths: XDGPaths, settleWindow: Duration = .seconds(SettleWindow.seconds), wake: @escaping @Sendable () -> Void) {
        let memory = TakenSet()
        self.memory = memory
        queuePath = paths.queueDatabase
        let reader = StoreReader(path: paths.queueDatabase, memory: memory)
        watcher = FolderWatcher(settings: WatcherSettings(folder: LocalPath(paths.localDrive), media: nil, settleWindow: settleWindow),
                                taken: memory) { event in
            switch event {
            case .found(let file):
                if reader.changed(file) { wake() }
            case .moved(let from, let to, _):
                reader.moved(from, to: to)
            case .notTaken(let path, let error):
                Log.info("Local Drive: \(path.display) could not be read (\(error.reason)); an edit of it is looked at when it can be")
            case .problem, .status:
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

    public func stop() {
        stopped.withLock { $0 = true }
        watcher.stop()
    }
}

/// The watcher thread's queue connection and what it does with a settled file. Used on
/// that thread only (and once before it starts), hence unchecked.
private final class StoreReader: @unchecked Sendable {
    let path: String
    let memory: TakenSet
    private var store: QueueStore?

    init(path: String, memory: TakenSet) {
        self.path = path
        self.memory = memory
    }

    private func open() -> QueueStore? {
        if let store { return store }
        store = try? QueueStore(path: path)
        return store
    }

    /// A settled file: true when it was queued as a new version.
    func changed(_ found: FoundFile) -> Bool {
        guard let store = open() else {
            Log.warning("Local Drive: the queue database cannot be opened; \(found.path.display) is looked at again when it changes")
            return false
        }
        do {
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

    /// A tracked file renamed within Local Drive stays the same file.
    func moved(_ from: LocalPath, to: LocalPath) {
        memory.move(from, to: to)
        try? open()?.moveLocalDrive(from, to: to)
    }
}
