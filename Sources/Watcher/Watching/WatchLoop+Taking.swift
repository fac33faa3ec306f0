import Glibc
import Platform

/// Deciding about a settled candidate: already taken, moved, passed over, or handed over.
extension WatchLoop {
    /// Whether a scan may skip this file: handed over or passed over in this run, waiting
    /// to settle, or taken at this very path.
    func isKnown(_ fingerprint: FileFingerprint, _ path: LocalPath) -> Bool {
        if passedOver.contains(fingerprint) || delivered[fingerprint] == path || settler.isPending(path) { return true }
        return taken.status(of: fingerprint, at: path) == .taken
    }

    /// Who writes the file, as far as the kernel can tell.
    enum Writing {
        /// Nobody, or the kernel cannot tell (no leases on this file system, a file of
        /// another user): the settle window alone decides, as it did before it was asked;
        /// that is said once.
        case nobody
        /// A program has it open for writing: it waits.
        case someone
        /// A program has kept it open for writing without changing it for `unfinishedWait`
        /// (one that keeps its files open): it is taken if it looks whole, since waiting on,
        /// it would never be sent, and nobody would be told.
        case someoneIdle
    }

    private func writing(_ file: FileBytes, _ path: LocalPath) -> Writing {
        switch file.writers {
        case .none:
            return .nobody
        case .some:
            if Self.since(file.fingerprint, in: &heldOpen, now: clock.now, wait: settings.unfinishedWait).forGood { return .someoneIdle }
            Log.debug("watching \(root.display): \(path.display) is still open for writing; waiting for it")
            return .someone
        case .unknown(let error):
            if writersUnknown == nil {
                writersUnknown = error
                Log.info("watching \(root.display): the kernel cannot tell whether a file here is still being written (\(error)); the settle window alone decides")
            }
            return .nobody
        }
    }

    /// Since when the file with `fingerprint` has been in `clocks`, noted now if it had not
    /// been; `forGood` once that is `wait` ago. A file that changes has another fingerprint,
    /// and waits anew.
    static func since(_ fingerprint: FileFingerprint, in clocks: inout [FileFingerprint: ContinuousClock.Instant],
                      now: ContinuousClock.Instant, wait: Duration) -> (since: ContinuousClock.Instant, first: Bool, forGood: Bool) {
        guard let since = clocks[fingerprint] else {
            clocks = clocks.filter { now - $0.value < wait * 2 }
            clocks[fingerprint] = now
            return (now, true, wait <= .zero)
        }
        return (since, false, now - since >= wait)
    }

    /// The owner asks for another look at a file: it is a candidate again, even if it was
    /// handed over or passed over before (see `FolderWatcher.reconsider`).
    func lookAgain(at path: LocalPath) {
        guard path.isWithin(root) else { return }
        guard presence == .present else {
            // A card out, a folder not made yet: the scan when it is back skips a file
            // handed over or passed over before, so the look waits for the folder.
            looksWhenBack.insert(path)
            return
        }
        for (fingerprint, at) in delivered where at == path { delivered[fingerprint] = nil }
        guard let fingerprint = FileFingerprint.ofRegularFile(notFollowing: path) else { return }
        passedOver.remove(fingerprint)
        settler.touch(path, fingerprint, noticedBy: .scan, now: clock.now)
    }

    /// Whether a picture or video that ends before its format says it does (a copy
    /// interrupted and left under its name) waits to be made whole, and how it falls
    /// short: the resumed copy then replaces it, and only the whole file is taken. One that
    /// stays so for `unfinishedWait` is taken as it is, so that a damaged photo is still
    /// backed up.
    private func waitsToBeWhole(_ file: FileBytes, _ info: MediaInfo, _ candidate: Settler.Settled, asItIs: inout String?) -> String? {
        let (path, fingerprint) = (candidate.path, candidate.fingerprint)
        guard let why = MediaCompleteness.cutShort(info.format, in: file) else { return nil }
        let (since, first, forGood) = Self.since(fingerprint, in: &cutShort, now: clock.now, wait: settings.unfinishedWait)
        if forGood {
            cutShort[fingerprint] = nil
            Log.warning("watching \(root.display): \(path.display) is taken as it is, though \(why): it has stayed so for \(Self.words(settings.unfinishedWait))")
            asItIs = "taken as it was after \(Self.words(settings.unfinishedWait)), though \(why): what is sent may be damaged"
            return nil
        }
        if first {
            Log.info("watching \(root.display): \(path.display) is not whole: \(why); it waits to be completed, and is taken as it is if it stays so for \(Self.words(settings.unfinishedWait))")
        }
        settler.postpone(path, fingerprint, noticedBy: candidate.noticedBy, until: since + settings.unfinishedWait)
        return why
    }

    /// Shows `path` as held back for `why` since `since` (now if unknown); as it was shown
    /// (`waited`) if that was for the same reason, so that its times stay put.
    private func holdBack(_ path: LocalPath, _ why: WaitingFile.Why, since: ContinuousClock.Instant?, _ waited: WaitingFile?) {
        if let waited, waited.why == why {
            waiting[path] = waited
            return
        }
        let now = nowMilliseconds()
        let start = now - Int64((clock.now - (since ?? clock.now)) / .milliseconds(1))
        waiting[path] = WaitingFile(path: path, why: why, since: start, until: start + Int64(settings.unfinishedWait / .milliseconds(1)))
    }

    /// "10 min", "90 s".
    static func words(_ wait: Duration) -> String {
        let seconds = wait.components.seconds
        return seconds >= 120 && seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }

    /// The files that settled together, those the memory knows under another name first
    /// (renamed while nobody watched, or while events were lost): a new file saved at the
    /// name one of them left, taken first, would replace the memory's record there, and the
    /// renamed one would then look new and be sent again. For the same reason a new file at
    /// a name whose remembered file still waits to settle under another name (noticed a
    /// moment later by the same walk) waits another window, until that one is followed.
    func takeAll(_ settled: [Settler.Settled]) {
        var renamed: [Settler.Settled] = [], rest: [Settler.Settled] = []
        for file in settled {
            if case .takenAt = taken.status(of: file.fingerprint, at: file.path) { renamed.append(file) } else { rest.append(file) }
        }
        for file in renamed { take(file) }
        for file in rest {
            if let before = taken.identity(takenAt: file.path), before != file.fingerprint.identity, settler.isPending(before) {
                settler.touch(file.path, file.fingerprint, noticedBy: file.noticedBy, now: clock.now)
                continue
            }
            take(file)
        }
    }

    func take(_ candidate: Settler.Settled) {
        let (path, fingerprint) = (candidate.path, candidate.fingerprint)
        let waited = waiting.removeValue(forKey: path)
        if passedOver.contains(fingerprint) { return }
        if let at = delivered[fingerprint] {
            if at != path, FileFingerprint.ofRegularFile(notFollowing: at) != fingerprint, !followSwap(at, path) {
                delivered[fingerprint] = path
                handler(.moved(from: at, to: path, isFolder: false))
            }
            return
        }
        switch taken.status(of: fingerprint, at: path) {
        case .taken:
            return
        case .takenAt(let other):
            // Still there with the same fingerprint: a hard link, the same file twice.
            if FileFingerprint.ofRegularFile(notFollowing: other) == fingerprint {
                passedOver.insert(fingerprint)
            } else if !followSwap(other, path) {
                handler(.moved(from: other, to: path, isFolder: false))
            }
            return
        case .new:
            break
        }
        let info: MediaInfo?
        var asItIs: String?
        do {
            let file = try FileBytes(path)
            guard file.fingerprint == fingerprint else {
                // It changed between the last look and the open: wait again.
                settler.touch(path, file.fingerprint, noticedBy: candidate.noticedBy, now: clock.now)
                return
            }
            // Still for the settle window is not whole: a copy that stalls keeps its file
            // open, and a file someone still writes waits for another window.
            let writer = writing(file, path)
            guard writer != .someone else {
                settler.touch(path, fingerprint, noticedBy: candidate.noticedBy, now: clock.now)
                holdBack(path, .openForWriting, since: heldOpen[fingerprint], waited)
                return
            }
            info = settings.media == nil ? nil
                : MediaInspector.inspect(file, name: path.lastComponent.bytes, modificationTimeNanoseconds: fingerprint.mtimeNanoseconds)
            if let info, settings.media?.includes(info.kind) == true {
                if writer == .someoneIdle, MediaCompleteness.cutShort(info.format, in: file) != nil {
                    // Cut short and still held open: a recording paused, a copy from a source
                    // that hangs. Its writer may yet finish it; taken now, it would go damaged,
                    // and the whole file beside it later.
                    settler.touch(path, fingerprint, noticedBy: candidate.noticedBy, now: clock.now)
                    holdBack(path, .openForWriting, since: heldOpen[fingerprint], waited)
                    return
                }
                if writer == .nobody, let why = waitsToBeWhole(file, info, candidate, asItIs: &asItIs) {
                    holdBack(path, .notWhole(why), since: cutShort[fingerprint], waited)
                    return
                }
            }
            if writer == .someoneIdle {
                heldOpen[fingerprint] = nil
                Log.warning("watching \(root.display): \(path.display) is taken though a program still has it open for writing: it has not changed for \(Self.words(settings.unfinishedWait))")
                asItIs = "taken though a program still had it open for writing, unchanged for \(Self.words(settings.unfinishedWait)): what is sent may not be whole"
            }
        } catch {
            if error.errno == ENOENT {
                // Gone; or its folder was renamed while what settled with it was taken, and the
                // rename, read next, finds it under the folder's new name (see `written`).
                writtenElsewhere.insert(path)
                return
            }
            if [ELOOP, EINVAL].contains(error.errno) { return }  // no longer a regular file
            // Not looked at again by scans until the owner asks (`FolderWatcher.reconsider`),
            // who says so.
            passedOver.insert(fingerprint)
            handler(.notTaken(path, error))
            return
        }
        if let media = settings.media {
            guard let info, media.includes(info.kind) else {
                passedOver.insert(fingerprint)
                return
            }
        }
        if let reason = info?.captureDate.fallbackReason {
            Log.info("\(path.display): dated by its modification time, because \(reason)")
        }
        delivered[fingerprint] = path
        counters.found += 1
        counters.lastFound = path
        handler(.found(FoundFile(path: path, relativePath: path.relative(to: root), fingerprint: fingerprint,
                                 media: info, noticedBy: candidate.noticedBy, takenAsItIs: asItIs)))
        forgetDeliveredOnceRemembered()
    }

    /// Lets go of the files handed over that the owner's memory now holds at their path:
    /// it answers for them from then on, and a library's first import would otherwise keep
    /// every path twice for as long as the agent runs. Looked at each time the list has
    /// doubled, so that it costs a constant per file.
    func forgetDeliveredOnceRemembered() {
        guard delivered.count >= deliveredCheckAt else { return }
        delivered = delivered.filter { taken.status(of: $0.key, at: $0.value) != .taken }
        deliveredCheckAt = max(Self.deliveredCheckFloor, delivered.count * 2)
    }
}
