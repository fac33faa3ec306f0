import Glibc
import Platform

/// The watcher's thread: the watch tree, the settler, pending renames and timers, all
/// owned here and changed nowhere else.
///
/// Each turn sleeps in `poll` until inotify has events, the mount table changed, the
/// owner rang, or the nearest deadline passed; then it handles what woke it, fires the
/// timers that are due, and publishes its status.
final class WatchLoop {
    let settings: WatcherSettings
    let root: LocalPath
    let inotify: Inotify
    let mounts: MountTable?
    let control: WatcherControl
    let taken: any TakenFiles
    let handler: FolderWatcher.Handler
    let clock = ContinuousClock()

    /// Whether the folder is there, as far as the watcher knows.
    enum Presence: Equatable {
        case present
        case missing
        case notAFolder
        case unreadable(SystemError)
    }

    /// An `IN_MOVED_FROM` waiting for its `IN_MOVED_TO`.
    struct PendingMove {
        var path: LocalPath
        var isFolder: Bool
        var deadline: ContinuousClock.Instant
    }

    var presence = Presence.missing
    var tree = WatchTree()
    /// The root folder's device and inode when its watches were placed.
    var rootIdentity: FileIdentity?
    /// Mount points inside the tree when it was last walked: a new one means a walk.
    var mountPointsInside: Set<LocalPath> = []
    /// While the folder is missing: the watch on its nearest existing parent.
    var parentWatch: (wd: Int32, folder: LocalPath)?
    /// While the folder is watched: a watch on each folder above it, for their moves.
    var ancestorWatches: [Int32: LocalPath] = [:]
    /// Why the kernel could not say whether a file is still open for writing, once said.
    var writersUnknown: SystemError?
    var settler: Settler
    var pendingMoves: [UInt32: PendingMove] = [:]
    /// The second of the two renames inotify tells a swap of names as, once the first was
    /// followed as the swap (see `followSwap`): not followed again.
    var swapHalf: (from: LocalPath, to: LocalPath)?
    var scanDue: ContinuousClock.Instant?
    /// A periodic look: a scan while out of watches, a look for a missing folder that cannot be watched for.
    var periodicDue: ContinuousClock.Instant?
    var outOfWatches = false
    /// `fs.inotify.max_user_watches` when the watches ran out, for the message.
    var watchLimit: String?
    var scanProblems: [WatcherTrouble] = []

    /// Files handed over in this run, by fingerprint: never handed over twice, even before
    /// the owner has recorded them (or when the owner does not keep them).
    var delivered: [FileFingerprint: LocalPath] = [:]
    /// When `delivered` is next looked at for files the owner's memory holds.
    var deliveredCheckAt = WatchLoop.deliveredCheckFloor
    static let deliveredCheckFloor = 1_024
    /// Files looked at and not taken (not a picture or video of the rule's kinds, unreadable).
    var passedOver: Set<FileFingerprint> = []
    /// Files made or written that were not at their name when the event was read, and files
    /// that settled and were gone when taken, until the end of the next read of the events:
    /// a rename of their folder, read then, finds them under its new name (see `written`).
    var writtenElsewhere: Set<LocalPath> = []
    /// Files deleted lately, and when (see `renamed`).
    var deletedLately: [LocalPath: ContinuousClock.Instant] = [:]
    /// Files still open for writing though still, by fingerprint: since when (see `writing`).
    var heldOpen: [FileFingerprint: ContinuousClock.Instant] = [:]
    /// Pictures and videos that end before their format says (a copy interrupted), closed,
    /// by fingerprint: since when they have waited to be made whole (see `waitsToBeWhole`).
    var cutShort: [FileFingerprint: ContinuousClock.Instant] = [:]
    /// Files held back, and why (see `WaitingFile`); each decision about a file says anew.
    var waiting: [LocalPath: WaitingFile] = [:]
    /// Files the owner asked to be looked at again while the folder was not there.
    var looksWhenBack: Set<LocalPath> = []
    var counters = WatcherStatus()

    /// How long an `IN_MOVED_FROM` waits for its pair before it counts as a move out of the tree.
    static let pairingWindow = Duration.milliseconds(100)

    init(settings: WatcherSettings, inotify: Inotify, mounts: MountTable?, control: WatcherControl,
         taken: any TakenFiles, handler: @escaping FolderWatcher.Handler) {
        self.settings = settings
        self.root = settings.folder
        self.inotify = inotify
        self.mounts = mounts
        self.control = control
        self.taken = taken
        self.handler = handler
        self.settler = Settler(window: settings.settleWindow)
    }

    func run() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Inotify.bufferSize, alignment: 8)
        defer { buffer.deallocate() }
        establish()
        publish()
        var fds = [pollfd(fd: inotify.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: control.wakeUp.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: mounts?.fd ?? -1, events: MountTable.pollEvents, revents: 0)]
        while true {
            let ready = poll(&fds, nfds_t(fds.count), timeout())
            if ready < 0 {
                if errno == EINTR { continue }
                Log.error("watching \(root.display): \(SystemError("poll")); trying again in 1 s")
                sleep(1)
                continue
            }
            if fds[1].revents != 0 {
                let requests = control.takeRequests()
                if requests.stop { return }
                if requests.scan { scanDue = clock.now }
                for path in requests.look { lookAgain(at: path) }
            }
            if fds[0].revents != 0 { readEvents(into: buffer) }
            if fds[2].revents != 0, MountTable.changed(fds[2].revents) { mountTableChanged() }
            fireTimers()
            publish()
        }
    }

    // MARK: - Timers

    /// Milliseconds until the nearest deadline, rounded up; -1 (sleep until woken) when none.
    private func timeout() -> Int32 {
        var next = settler.nextDeadline()
        for candidate in [scanDue, periodicDue] + pendingMoves.values.map(\.deadline) {
            guard let candidate else { continue }
            next = next.map { min($0, candidate) } ?? candidate
        }
        return clock.pollTimeout(until: next)
    }

    private func fireTimers() {
        let now = clock.now
        for (cookie, move) in pendingMoves where move.deadline <= now {
            pendingMoves[cookie] = nil
            movedOut(move)
        }
        if let due = scanDue, due <= now {
            scanDue = nil
            rescan()
        }
        if let due = periodicDue, due <= now {
            periodicDue = nil
            rescan()
        }
        let settled = settler.settle(now: clock.now) { path in
            let fingerprint = FileFingerprint.ofRegularFile(notFollowing: path)
            if fingerprint == nil { writtenElsewhere.insert(path) }  // its folder renamed, perhaps: see `written`
            return fingerprint
        }
        takeAll(settled)
    }

    /// Walks the tree if it is there; otherwise (or if it went away during the walk)
    /// looks for it again.
    func rescan() {
        if presence == .present { sweep() }
        if presence != .present { establish() }
    }

    // MARK: - Status

    /// Derives the status from the facts above, in this one place, and tells the owner
    /// when its state or troubles changed.
    func publish() {
        var status = counters
        var troubles: [WatcherTrouble] = []
        switch presence {
        case .present:
            status.state = outOfWatches ? .scanningPeriodically : .watching
        case .missing:
            status.state = .folderMissing
            troubles.append(.folderMissing(root))
        case .notAFolder:
            status.state = .folderMissing
            troubles.append(.notAFolder(root))
        case .unreadable(let error):
            status.state = .folderMissing
            troubles.append(.unreadable(root, error))
        }
        if outOfWatches { troubles.append(.outOfWatches(root, limit: watchLimit)) }
        status.troubles = troubles + scanProblems
        status.watchedFolders = tree.count
        status.settling = settler.count
        status.quiet = settler.count == 0 && pendingMoves.isEmpty && scanDue == nil
        // One gone or renamed meanwhile waits no more under that name.
        if !waiting.isEmpty { waiting = waiting.filter { settler.isPending($0.key) } }
        status.waiting = waiting.values.sorted { $0.path < $1.path }
        if control.publish(status) { handler(.status(status)) }
    }

    static func currentWatchLimit() -> String? {
        (try? FileIO.readSmallFile("/proc/sys/fs/inotify/max_user_watches", limit: 64))?
            .trimmingWhitespace()
    }
}
