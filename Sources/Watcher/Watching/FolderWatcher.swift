import Platform

/// Watches one folder tree and hands over each new picture or video once, when whole.
///
/// One thread of its own sleeps in `poll` on an inotify descriptor, on
/// `/proc/self/mountinfo` (for cards coming and going) and on an eventfd that `stop()`
/// and `scanNow()` ring; its only timeout is the nearest deadline (a settle window ending,
/// a periodic scan while out of watches), so an idle watcher costs nothing. All of the
/// tree's state lives on that thread (`WatchLoop`); this object only starts, stops and
/// asks it.
///
/// What it delivers, on its thread, through `handler`: `found` for a new file (settled,
/// not known to `taken`, of a kind the settings select), `moved` when a taken file was
/// renamed inside the tree, `problem` for a part of the tree it cannot read, `status`
/// when its state or troubles change.
public final class FolderWatcher: Sendable {
    public typealias Handler = @Sendable (WatchEvent) -> Void

    public let settings: WatcherSettings
    private let taken: any TakenFiles
    private let handler: Handler
    private let running = Locked<Running?>(nil)
    private let lastStatus = Locked(WatcherStatus())

    private struct Running: Sendable {
        var thread: DedicatedThread
        var control: WatcherControl
    }

    /// A watcher for `settings.folder`; `taken` is asked about every candidate, and
    /// `handler` hears everything (keep it short: queue the work, do not upload there).
    public init(settings: WatcherSettings, taken: any TakenFiles, handler: @escaping Handler) {
        self.settings = settings
        self.taken = taken
        self.handler = handler
    }

    /// Opens the inotify instance and starts the watcher's thread, which places the
    /// watches and scans the tree for files the caller does not know. A missing folder is
    /// not an error (it is a status, and the watcher waits for it); only running out of
    /// inotify instances or threads is. Does nothing if already started.
    public func start() throws(WatcherTrouble) {
        try running.withLock { (running: inout Running?) throws(WatcherTrouble) in
            if running != nil { return }
            let inotify: Inotify
            do throws(InotifyError) { inotify = try Inotify() } catch {
                throw error.kind == .outOfInstances ? .outOfInstances(settings.folder) : .system(error.system, folder: settings.folder)
            }
            // Without the mount table a card that comes back is still found through its
            // parent folder, unless it is mounted on an existing empty folder.
            let mounts = settings.mountTable.flatMap { try? MountTable(path: $0) }
            let control: WatcherControl
            do throws(SystemError) { control = WatcherControl(wakeUp: try WakeUp()) } catch {
                throw .system(error, folder: settings.folder)
            }
            let (settings, taken, handler) = (self.settings, self.taken, self.handler)
            do throws(SystemError) {
                let thread = try DedicatedThread(name: "iu-watcher") {
                    WatchLoop(settings: settings, inotify: inotify, mounts: mounts, control: control,
                              taken: taken, handler: handler).run()
                }
                running = Running(thread: thread, control: control)
            } catch {
                throw .system(error, folder: settings.folder)
            }
        }
    }

    /// True between `start()` and `stop()`.
    public var isRunning: Bool { running.withLock { $0 != nil } }

    /// Stops watching. When it returns the handler is not running and will not run again,
    /// unless it was called from the handler itself, where the thread ends right after.
    public func stop() {
        guard let run = running.withLock({ (running: inout Running?) -> Running? in
            defer { running = nil }
            return running
        }) else { return }
        run.control.requestStop()
        if run.thread.isCurrent { run.thread.detach() } else { run.thread.join() }
        var final = run.control.status
        final.state = .stopped
        lastStatus.withLock { $0 = final }
    }

    /// Asks for a reconcile scan of the whole tree now (e.g. after the caller forgot files).
    public func scanNow() {
        running.withLock { $0?.control.requestScan() }
    }

    /// Looks at these files again as if they had just appeared, even those handed over or
    /// passed over before: for files the caller could not take then, or took and forgot.
    /// The caller's `taken` must call them new by now.
    public func reconsider(_ paths: [LocalPath]) {
        guard !paths.isEmpty else { return }
        running.withLock { $0?.control.requestLook(at: paths) }
    }

    /// What is on its way from the tree, in words ("2 files settling in /home/me/Camera"; a
    /// file held back is named, with why). Nil once nothing is: the tree was walked, no file
    /// settles, and what was asked of it is done (see `WatcherStatus.quiet`); and when not
    /// running.
    public var arriving: String? {
        guard let control = running.withLock({ $0?.control }), !control.isQuiet else { return nil }
        let status = control.status
        let folder = settings.folder.display
        if status.state == .starting { return "\(folder) being walked" }
        guard status.settling > 0 else { return "\(folder) being looked at" }
        var words = "\(DisplayText.grouped(status.settling)) \(status.settling == 1 ? "file" : "files") settling in \(folder) (still written, copied or held open)"
        if let first = status.waiting.first {
            words += "; held back: \(first.path.lastComponent.display): \(first.why.words)"
            if status.waiting.count > 1 { words += ", and \(DisplayText.grouped(status.waiting.count - 1)) more" }
        }
        return words
    }

    /// Where the watcher stands now.
    public var status: WatcherStatus {
        if let control = running.withLock({ $0?.control }) { return control.status }
        return lastStatus.withLock { $0 }
    }
}
