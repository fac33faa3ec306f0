import Glibc
import Platform

/// Placing and dropping watches: the whole tree, new subtrees, and the parent of a
/// folder that is missing.
extension WatchLoop {
    /// What is at the root path now.
    enum RootState {
        case folder(FileIdentity)
        case notAFolder
        case missing
        case unreadable(SystemError)
    }

    func rootState() -> RootState {
        let st: stat
        do throws(SystemError) { st = try FileIO.status(root) } catch {
            return [ENOENT, ENOTDIR].contains(error.errno) ? .missing : .unreadable(error)
        }
        return FileKind.of(mode: st.st_mode) == .directory ? .folder(FileIdentity(st)) : .notAFolder
    }

    /// Watches the whole tree if the folder is there; else watches its nearest existing
    /// parent for it. Looks again after placing the parent's watch, since the folder, or the
    /// next folder on the way down to it, may have been made in between (the watch then
    /// never hears of it); gives up for a second if it keeps flapping.
    func establish() {
        for _ in 0..<5 {
            switch rootState() {
            case .folder(let identity):
                if arm(identity) { return }
                if case .unreadable = presence {
                    periodicDue = clock.now + settings.fallbackScanInterval
                    return
                }
                continue
            case .missing:
                presence = .missing
            case .notAFolder:
                presence = .notAFolder
            case .unreadable(let error):
                presence = .unreadable(error)
                // A permission change makes no event this watcher hears: look again later.
                periodicDue = clock.now + settings.fallbackScanInterval
            }
            let watched = watchNearestParent()
            if case .folder = rootState() { continue }
            if let watched, let next = nextComponent(below: watched), Self.isFolder(watched.appending(LocalPath(bytes: next))) { continue }
            return
        }
        periodicDue = clock.now + .seconds(1)
    }

    /// Places the watches on a folder that is there, scans it, and looks again at the files
    /// asked for while it was away. False when it vanished, or a folder above it moved,
    /// before or while it was walked.
    private func arm(_ identity: FileIdentity) -> Bool {
        if let parent = parentWatch {
            inotify.removeWatch(parent.wd)
            parentWatch = nil
        }
        // The folders above are watched before the walk, which takes minutes in a large
        // library: one moved meanwhile is heard of once the walk is done. One moved before
        // its watch was placed is seen by looking at the folder again.
        watchAncestors()
        guard case .folder(let now) = rootState(), now == identity else {
            dropAncestorWatches()
            return false
        }
        presence = .present
        rootIdentity = identity
        sweep()
        guard presence == .present else { return false }
        let looks = looksWhenBack
        looksWhenBack = []
        for path in looks { lookAgain(at: path) }
        return true
    }

    /// Watches each folder above the root for its own move or deletion: the tree's watches
    /// follow their inodes, so when a folder above is moved (`mv ~/media/CARD ~/staging/`)
    /// nothing in the tree says so. A folder above that cannot be watched is left out.
    func watchAncestors() {
        dropAncestorWatches()
        var folder = root.parent
        while folder.bytes.count > 1 {
            if let wd = try? inotify.addWatch(folder, mask: .ancestor) { ancestorWatches[wd] = folder }
            folder = folder.parent
        }
    }

    private func dropAncestorWatches() {
        for wd in ancestorWatches.keys { inotify.removeWatch(wd) }
        ancestorWatches = [:]
    }

    /// Walks the whole tree: every folder gets (or keeps) its watch, every file the owner
    /// does not know becomes a candidate, and watches on folders no longer in the tree
    /// are dropped. This is the reconcile after an overflow, the periodic scan while out
    /// of watches, and the first scan.
    func sweep() {
        let now = clock.now
        var visited = Set<Int32>()
        var ranOut = false
        var problems: [WatcherTrouble] = []
        var scanner = ReconcileScanner(root: root)
        scanner.remembered = taken
        let summary = scanner.scan(
            enteringFolder: { folder in
                switch place(folder, isRoot: folder == root) {
                case .placed(let wd): visited.insert(wd)
                case .outOfWatches: ranOut = true
                case .failed(let trouble?): problems.append(trouble)
                case .failed(nil): break
                }
            },
            isKnown: isKnown,
            onNew: { file in settler.touch(file.path, file.fingerprint, noticedBy: .scan, now: now) })
        counters.scans += 1
        if let error = summary.rootError {
            lostRoot()
            presence = [ENOENT, ENOTDIR].contains(error.errno) ? .missing : .unreadable(error)
            return
        }
        // Folders the walk did not reach were deleted or moved out while events were lost.
        for wd in tree.allWatches where !visited.contains(wd) {
            inotify.removeWatch(wd)
            tree.remove(wd)
        }
        noteScanProblems(summary.problems.map { .unreadable($0.path, $0.error) } + problems)
        if ranOut != outOfWatches {
            outOfWatches = ranOut
            watchLimit = ranOut ? Self.currentWatchLimit() : nil
            if ranOut {
                Log.warning("watching \(root.display): out of inotify watches; scanning every \(settings.fallbackScanInterval) instead")
            } else {
                Log.info("watching \(root.display): every folder is watched again")
            }
        }
        periodicDue = outOfWatches ? clock.now + settings.fallbackScanInterval : nil
        if let mounts = settings.mountTable { mountPointsInside = Self.mountPoints(within: root, from: mounts) }
    }

    /// Walks a folder that appeared inside the tree (made, or moved in): its watches go
    /// in before its listing is read, so a file that lands meanwhile is seen either way.
    func armSubtree(_ folder: LocalPath) {
        let now = clock.now
        var scanner = ReconcileScanner(root: folder)
        scanner.followsRootLink = false
        scanner.remembered = taken
        var problems: [WatcherTrouble] = []
        let summary = scanner.scan(
            enteringFolder: { path in
                switch place(path, isRoot: false) {
                case .placed: break
                case .outOfWatches:
                    if !outOfWatches {
                        outOfWatches = true
                        watchLimit = Self.currentWatchLimit()
                        Log.warning("watching \(root.display): out of inotify watches; scanning every \(settings.fallbackScanInterval) instead")
                    }
                    periodicDue = periodicDue ?? clock.now + settings.fallbackScanInterval
                case .failed(let trouble?): problems.append(trouble)
                case .failed(nil): break
                }
            },
            isKnown: isKnown,
            onNew: { file in settler.touch(file.path, file.fingerprint, noticedBy: .scan, now: now) })
        let all = summary.problems.map { WatcherTrouble.unreadable($0.path, $0.error) } + problems
        for trouble in all where !scanProblems.contains(trouble) { handler(.problem(trouble)) }
        scanProblems += all.filter { !scanProblems.contains($0) }
    }

    private enum Placement {
        case placed(Int32)
        case outOfWatches
        /// With a trouble to report, or nil when the folder simply went away.
        case failed(WatcherTrouble?)
    }

    private func place(_ folder: LocalPath, isRoot: Bool) -> Placement {
        do {
            let wd = try inotify.addWatch(folder, mask: isRoot ? .treeFolder : InotifyMask.treeFolder.union(.dontFollow))
            tree.insert(wd, for: folder)
            return .placed(wd)
        } catch {
            switch error.kind {
            case .outOfWatches: return .outOfWatches
            case .gone: return .failed(nil)
            case .denied: return .failed(.unreadable(folder, error.system))
            case .outOfInstances, .other: return .failed(.system(error.system, folder: folder))
            }
        }
    }

    /// Reports problems not reported by the last walk, and keeps the list for the status.
    private func noteScanProblems(_ problems: [WatcherTrouble]) {
        for trouble in problems where !scanProblems.contains(trouble) {
            Log.warning("watching \(root.display): \(trouble)")
            handler(.problem(trouble))
        }
        scanProblems = problems
    }

    /// The folder went away (deleted, moved, unmounted): every watch and every wait ends.
    func lostRoot() {
        if presence == .present { Log.warning("watching \(root.display): the folder is gone; waiting for it to come back") }
        for wd in tree.allWatches { inotify.removeWatch(wd) }
        tree = WatchTree()
        dropAncestorWatches()
        settler.removeAll()
        pendingMoves = [:]
        swapHalf = nil
        rootIdentity = nil
        outOfWatches = false
        watchLimit = nil
        scanProblems = []
        periodicDue = nil
        presence = .missing
    }

    /// Watches the nearest existing parent of the missing folder for the next folder on
    /// the way down to appear (`IN_CREATE`, `IN_MOVED_TO`), or for itself to go. Returns the
    /// folder watched; nil when it could not be.
    private func watchNearestParent() -> LocalPath? {
        var folder = root.parent
        while folder.bytes.count > 1, !Self.isFolder(folder) { folder = folder.parent }
        do {
            let wd = try inotify.addWatch(folder, mask: .waitingParent)
            if let old = parentWatch, old.wd != wd { inotify.removeWatch(old.wd) }
            parentWatch = (wd, folder)
            return folder
        } catch {
            Log.warning("watching \(root.display): cannot watch \(folder.display) for it to come back (\(error)); looking again in \(settings.fallbackScanInterval)")
            periodicDue = clock.now + settings.fallbackScanInterval
            return nil
        }
    }

    /// The next component on the way from the watched parent down to the root.
    func nextComponent(below parent: LocalPath) -> [UInt8]? {
        guard root.isWithin(parent), root != parent else { return nil }
        let rest = root.relative(to: parent).bytes
        return Array(rest.prefix { $0 != UInt8(ascii: "/") })
    }

    static func isFolder(_ path: LocalPath) -> Bool {
        (try? FileIO.status(path)).map { FileKind.of(mode: $0.st_mode) == .directory } ?? false
    }

    // MARK: - Mounts

    /// Something was mounted or unmounted somewhere. If the folder is another one now (a
    /// card mounted on it or taken away from under it) everything is placed again; if a
    /// mount appeared or went inside the tree, the tree is walked; a missing folder is
    /// looked for again.
    func mountTableChanged() {
        guard presence == .present else {
            establish()
            return
        }
        if case .folder(let identity) = rootState(), identity == rootIdentity {
            guard let table = settings.mountTable, Self.mountPoints(within: root, from: table) != mountPointsInside else { return }
            sweep()
            return
        }
        lostRoot()
        establish()
    }

    private static func mountPoints(within root: LocalPath, from table: String) -> Set<LocalPath> {
        Set(MountTable.mountPoints(from: table).filter { $0.isWithin(root) })
    }
}
