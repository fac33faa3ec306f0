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

    func take(_ candidate: Settler.Settled) {
        let (path, fingerprint) = (candidate.path, candidate.fingerprint)
        if passedOver.contains(fingerprint) { return }
        if let at = delivered[fingerprint] {
            if at != path, Self.fingerprint(at) != fingerprint {
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
            if Self.fingerprint(other) == fingerprint {
                passedOver.insert(fingerprint)
            } else {
                handler(.moved(from: other, to: path, isFolder: false))
            }
            return
        case .new:
            break
        }
        let info: MediaInfo?
        do {
            let file = try FileBytes(path)
            guard file.fingerprint == fingerprint else {
                // It changed between the last look and the open: wait again.
                settler.touch(path, file.fingerprint, noticedBy: candidate.noticedBy, now: clock.now)
                return
            }
            info = MediaInspector.inspect(file, name: path.lastComponent.bytes, modificationTimeNanoseconds: fingerprint.mtimeNanoseconds)
        } catch {
            if [ENOENT, ELOOP, EINVAL].contains(error.errno) { return }  // gone, or no longer a regular file
            passedOver.insert(fingerprint)
            let trouble = WatcherTrouble.unreadable(path, error)
            Log.warning("watching \(root.display): \(trouble)")
            handler(.problem(trouble))
            return
        }
        guard let info, settings.media.includes(info.kind) else {
            passedOver.insert(fingerprint)
            return
        }
        if let reason = info.captureDate.fallbackReason {
            Log.info("\(path.display): dated by its modification time, because \(reason)")
        }
        delivered[fingerprint] = path
        counters.found += 1
        counters.lastFound = path
        handler(.found(FoundFile(path: path, relativePath: path.relative(to: root), fingerprint: fingerprint,
                                 media: info, noticedBy: candidate.noticedBy)))
    }
}
