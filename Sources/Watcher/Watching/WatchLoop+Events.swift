import Glibc
import Platform

/// Turning inotify events into candidates, renames and changes of the tree.
extension WatchLoop {
    func readEvents(into buffer: UnsafeMutableRawBufferPointer) {
        // Bounded, so timers still fire while a flood of events goes on.
        for _ in 0..<64 {
            let events: [InotifyEvent]
            do { events = try inotify.read(into: buffer) } catch {
                Log.error("watching \(root.display): \(error)")
                return
            }
            if events.isEmpty { break }
            for event in events { handle(event) }
        }
        // Their folder's rename, if that is why they were not there, came with them.
        writtenElsewhere = []
    }

    func handle(_ event: InotifyEvent) {
        if event.mask.contains(.queueOverflow) {
            counters.overflows += 1
            Log.info("watching \(root.display): the kernel's event queue overflowed; scanning the folder to catch up")
            // A rename whose other half was lost is settled by the scan, not guessed at.
            pendingMoves = [:]
            swapHalf = nil
            scanDue = clock.now
            return
        }
        if let parent = parentWatch, event.watch == parent.wd {
            parentEvent(event, parent: parent.folder)
            return
        }
        if let ancestor = ancestorWatches[event.watch] {
            ancestorEvent(event, folder: ancestor)
            return
        }
        guard let folder = tree.folder(of: event.watch) else { return }  // a watch already dropped
        let isRoot = folder == root
        if event.mask.contains(.ignored) {
            tree.remove(event.watch)
            if isRoot { rootWentAway() } else { subfolderWatchEnded(folder) }
            return
        }
        if event.mask.contains(.unmount) || event.mask.contains(.deleteSelf) || event.mask.contains(.moveSelf) {
            // A subfolder's own departure shows in its parent's events; only the root's matters here.
            if isRoot { rootWentAway() }
            return
        }
        guard let name = event.name else { return }
        let path = folder.appending(LocalPath(bytes: name))
        let isFolder = event.mask.contains(.isDirectory)
        let ignored = IgnoredNames.isIgnored(name, in: folder, remembered: taken)

        if event.mask.contains(.movedFrom) {
            if ignored { settler.remove(path); return }
            pendingMoves[event.cookie] = PendingMove(path: path, isFolder: isFolder, deadline: clock.now + Self.pairingWindow)
        } else if event.mask.contains(.movedTo) {
            // A swap's second half is the very next rename the kernel tells; whatever comes
            // instead, the swap is over.
            let half = swapHalf
            swapHalf = nil
            if let from = pendingMoves.removeValue(forKey: event.cookie) {
                if let half, half.from == from.path, half.to == path {
                    // Followed with the first.
                } else if ignored { movedOut(from) } else { renamed(from, to: path, isFolder: isFolder) }
            } else if !ignored {
                arrived(path, isFolder: isFolder)
            }
        } else if event.mask.contains(.create) {
            if isFolder {
                if !ignored { armSubtree(path) }
            } else if !ignored {
                // A hard link (`ln`, `cp -l`, `rsync --link-dest`) makes no IN_CLOSE_WRITE:
                // this is all that says it is there. A file made to be written waits like
                // any other, until it is still and its writer has closed it.
                written(path)
            }
        } else if event.mask.contains(.closeWrite) {
            if !isFolder, !ignored { written(path) }
        } else if event.mask.contains(.delete) {
            if !isFolder {
                settler.remove(path)
                deleted(path)
            }
        }
    }

    /// A file made or written: it settles. One no longer at its name may be in a folder
    /// renamed since the event, whose rename comes later in the same read: it is looked for
    /// under the folder's new name then.
    private func written(_ path: LocalPath) {
        if let fingerprint = FileFingerprint.ofRegularFile(notFollowing: path) {
            settler.touch(path, fingerprint, noticedBy: .event, now: clock.now)
        } else {
            writtenElsewhere.insert(path)
        }
    }

    /// A file deleted at `path`: remembered for a while (see `renamed`), and told.
    private func deleted(_ path: LocalPath) {
        let now = clock.now
        if deletedLately.count >= 1_024 { deletedLately = deletedLately.filter { now - $0.value < Self.deletedMemory(settings) } }
        deletedLately[path] = now
        handler(.left(path))
    }

    private func wasDeletedLately(_ path: LocalPath) -> Bool {
        deletedLately[path].map { clock.now - $0 < Self.deletedMemory(settings) } ?? false
    }

    /// How long a deletion is remembered: as long as a file made at its name waits to settle, twice.
    static func deletedMemory(_ settings: WatcherSettings) -> Duration { settings.settleWindow * 2 + pairingWindow }

    /// Something new moved in from outside the tree (or from a hidden or temporary name).
    /// A file no longer at its name is looked for as `written` does.
    private func arrived(_ path: LocalPath, isFolder: Bool) {
        if isFolder {
            armSubtree(path)
        } else {
            written(path)
        }
    }

    /// A rename inside the tree: the same file or folder under a new name.
    private func renamed(_ from: PendingMove, to path: LocalPath, isFolder: Bool) {
        // A swap of names, of two files, two folders, or a file and a folder: the watches,
        // and the files waiting to settle, are under the names they had.
        if followFolderSwap(from.path, path) || followSwap(from.path, path) {
            LocalPath.exchange(from.path, path) { old, new in
                tree.move(old, to: new)
                settler.move(old, to: new, now: clock.now)
            }
            swapHalf = (from: path, to: from.path)
            return
        }
        if isFolder {
            let watched = tree.watch(of: from.path)
            tree.move(from.path, to: path)
            settler.move(from.path, to: path, now: clock.now)
            for (fingerprint, at) in delivered where at.isWithin(from.path) {
                delivered[fingerprint] = at.moved(from: from.path, to: path)
            }
            handler(.moved(from: from.path, to: path, isFolder: true))
            for file in writtenElsewhere where file.isWithin(from.path) {
                writtenElsewhere.remove(file)
                written(file.moved(from: from.path, to: path))
            }
            // Walked at its new name, as a folder made there would be, if the watch the tree
            // moved here is not the folder's: one made and renamed before its IN_CREATE was
            // handled, or renamed between a sweep's listing and its walk, has none and was
            // never scanned; and the watch at the old name may be of a folder made there
            // since (`mkdir D; mv D E; mkdir D`, read late).
            if watched == nil || kernelWatch(of: path) != watched {
                armSubtree(path)
            }
            return
        }
        let wasWaiting = settler.isPending(from.path)
        if wasWaiting { settler.move(from.path, to: path, now: clock.now) }
        if let fingerprint = FileFingerprint.ofRegularFile(notFollowing: path) {
            if delivered[fingerprint] == from.path || taken.status(of: fingerprint, at: from.path) == .taken {
                if delivered[fingerprint] != nil { delivered[fingerprint] = path }
                handler(.moved(from: from.path, to: path, isFolder: false))
            } else if !wasDeletedLately(from.path), isTaken(fingerprint.identity, at: from.path) {
                // The same file, written again and renamed before it settled, or renamed and
                // written again before this event was read (`edit a; mv a b`, `mv a b; edit
                // b`): the rename is followed, and the edit settles as a change of it. Not
                // if a file was deleted at the old name lately: one made there since is
                // another file, whatever inode it was given (ext4 gives the freed one).
                for (known, at) in delivered where at == from.path { delivered[known] = path }
                handler(.moved(from: from.path, to: path, isFolder: false))
                settler.touch(path, fingerprint, noticedBy: .event, now: clock.now)
            } else if !passedOver.contains(fingerprint) {
                // Never taken under its old name: it is a candidate like any other.
                settler.touch(path, fingerprint, noticedBy: .event, now: clock.now)
            }
        }
        if wasWaiting, let left = FileFingerprint.ofRegularFile(notFollowing: from.path) {
            // A file at the old name again, whose wait the move took along: a swap with a file
            // neither taken nor waiting, or a file made there since. It waits as it is.
            settler.touch(from.path, left, noticedBy: .event, now: clock.now)
        }
    }

    /// Whether what moved from `from` to `to` (a file, or a folder) traded names with the
    /// file taken at `to`, which is now at `from` (`renameat2` with `RENAME_EXCHANGE`, `mv --exchange`, told by
    /// inotify as two renames, `from` to `to` and back; or renames read late that came to
    /// the same). Followed as two renames, the first would land on the other's record and
    /// drop it, and that file would be taken again as new. If so, the owner is told of the
    /// swap, the files handed over under either name follow, and true.
    ///
    /// The whole fingerprint must match, not only the inode: after `mv a b`, a file made
    /// anew at `a` is often given the inode of the `b` the rename freed (ext4 does so), and
    /// taken for that file it would go to the server as the other file's new version.
    func followSwap(_ from: LocalPath, _ to: LocalPath) -> Bool {
        guard let there = FileFingerprint.ofRegularFile(notFollowing: from),
              delivered[there] == to || taken.status(of: there, at: to) == .taken else { return false }
        if FileFingerprint.ofRegularFile(notFollowing: to)?.identity == there.identity {
            return false  // the same file under both names: hard links
        }
        swapDelivered(from, to)
        handler(.exchanged(from, to))
        return true
    }

    /// Whether what moved from `from` to `to` (a folder, or a file) traded names with the
    /// folder watched at `to`, now at `from` (as `followSwap`, for a folder at the old name).
    /// The kernel says so (`kernelWatch`). If so, the files handed over and the owner
    /// follow, and true.
    private func followFolderSwap(_ from: LocalPath, _ to: LocalPath) -> Bool {
        guard let other = tree.watch(of: to), let wd = kernelWatch(of: from) else { return false }
        guard wd == other else {
            if tree.folder(of: wd) == nil { inotify.removeWatch(wd) }  // not one of ours: its own events will say what it is
            return false
        }
        swapDelivered(from, to)
        handler(.exchanged(from, to))
        return true
    }

    /// The descriptor of the folder at `path` now, as the kernel tells it: asked to watch a
    /// folder it watches already, it hands back that folder's descriptor (with the mask a
    /// folder of the tree has); a folder it did not watch is watched from now on. Nil when
    /// no folder is there.
    private func kernelWatch(of path: LocalPath) -> Int32? {
        try? inotify.addWatch(path, mask: InotifyMask.treeFolder.union([.dontFollow, .onlyDirectory]))
    }

    /// The files handed over at `a` or below it are at `b` now, and the other way round.
    private func swapDelivered(_ a: LocalPath, _ b: LocalPath) {
        LocalPath.exchange(a, b) { old, new in
            for (known, at) in delivered where at.isWithin(old) { delivered[known] = at.moved(from: old, to: new) }
        }
    }

    /// Whether the file handed over or taken at `path` is the one with `identity`.
    private func isTaken(_ identity: FileIdentity, at path: LocalPath) -> Bool {
        if taken.identity(takenAt: path) == identity { return true }
        // Handed over in this run, perhaps not recorded yet (rare: read only for a rename of a
        // file neither taken nor settling).
        return delivered.contains { $0.value == path && $0.key.identity == identity }
    }

    /// An `IN_MOVED_FROM` without its pair (it left the tree), or paired with a name the
    /// watcher leaves out.
    func movedOut(_ move: PendingMove) {
        handler(.left(move.path))
        if move.isFolder {
            for wd in tree.watches(under: move.path) {
                inotify.removeWatch(wd)
                tree.remove(wd)
            }
            settler.removeAll(under: move.path)
            // A folder that arrived at the name after this one left (within the pairing
            // window) lost its watches and waits with it: it is walked again; a file waits anew.
            if Self.isFolder(move.path) {
                armSubtree(move.path)
            } else if let fingerprint = FileFingerprint.ofRegularFile(notFollowing: move.path) {
                settler.touch(move.path, fingerprint, noticedBy: .event, now: clock.now)
            }
        } else if FileFingerprint.ofRegularFile(notFollowing: move.path) == nil {
            // Only if nothing is there now: a file that arrived at the name after this one
            // left (a file moved away and put back, an editor's save renamed into the name
            // within the pairing window) is waited for as it is.
            settler.remove(move.path)
        }
    }

    private func rootWentAway() {
        lostRoot()
        establish()
    }

    /// A subfolder's watch ended. Usually it was deleted; if it is still there a file
    /// system was unmounted from it, and the folder underneath needs a watch of its own.
    private func subfolderWatchEnded(_ folder: LocalPath) {
        settler.removeAll(under: folder)
        if Self.isFolder(folder), tree.watch(of: folder) == nil { armSubtree(folder) }
    }

    /// A folder above the root moved, was deleted or unmounted. The tree's watches follow
    /// their folders, wherever that folder took them: unless the root is still the folder
    /// at its path, it is gone from here, and waited for like a folder that was renamed.
    private func ancestorEvent(_ event: InotifyEvent, folder: LocalPath) {
        if event.mask.contains(.ignored) { ancestorWatches[event.watch] = nil }
        if case .folder(let identity) = rootState(), identity == rootIdentity {
            watchAncestors()
            return
        }
        Log.info("watching \(root.display): \(folder.display), a folder above it, was moved or removed")
        lostRoot()
        establish()
    }

    /// An event on the parent watched while the folder is missing: look again when the
    /// next folder on the way down appears, or when the parent itself goes.
    private func parentEvent(_ event: InotifyEvent, parent: LocalPath) {
        let selfEvent: InotifyMask = [.ignored, .unmount, .deleteSelf, .moveSelf]
        if !event.mask.isDisjoint(with: selfEvent) {
            if event.mask.contains(.ignored) { parentWatch = nil }
            establish()
        } else if let name = event.name, name == nextComponent(below: parent) {
            establish()
        }
    }
}
