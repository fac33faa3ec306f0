import Platform

/// What the caller remembers about a file the watcher is about to hand over.
public enum TakenStatus: Sendable, Equatable {
    /// Never taken: a candidate.
    case new
    /// Taken before, at this path.
    case taken
    /// This very file (same fingerprint) was taken under another path: it was renamed or
    /// moved within the folder, or the other path is a hard link to it.
    case takenAt(LocalPath)
}

/// The caller's memory of the files a rule took, asked before anything is delivered and
/// for every file a reconcile scan sees, so it must answer from memory, quickly.
public protocol TakenFiles: Sendable {
    func status(of fingerprint: FileFingerprint, at path: LocalPath) -> TakenStatus
    /// The device and inode of the file taken at `path`, if one was: a rename the watcher
    /// reads after the file was written again is still that file.
    func identity(takenAt path: LocalPath) -> FileIdentity?
}

extension TakenFiles {
    public func identity(takenAt path: LocalPath) -> FileIdentity? { nil }
}

/// An in-memory `TakenFiles`: the agent loads it from its database when a rule starts and
/// adds to it as it takes files.
///
/// A file is known by its fingerprint (device, inode, size, mtime). It is also known by
/// its path when size and mtime to the nanosecond still match but device or inode do not:
/// that is the same card mounted again under another device number, or the folder
/// restored from a backup with its times (`cp -a`, `rsync -a`).
public final class TakenSet: TakenFiles {
    private struct Memory {
        var byFingerprint: [FileFingerprint: LocalPath] = [:]
        var byPath: [LocalPath: FileFingerprint] = [:]
    }

    private let memory = Locked(Memory())

    public init() {}

    public init(_ files: some Sequence<(FileFingerprint, LocalPath)>) {
        for (fingerprint, path) in files { insert(fingerprint, at: path) }
    }

    public var count: Int { memory.withLock { $0.byPath.count } }

    /// Remembers that the file at `path` with this fingerprint was taken.
    public func insert(_ fingerprint: FileFingerprint, at path: LocalPath) {
        memory.withLock { m in
            if let old = m.byPath[path] { m.byFingerprint[old] = nil }
            m.byFingerprint[fingerprint] = path
            m.byPath[path] = fingerprint
        }
    }

    /// Forgets what was taken at `path`: a file there is new again.
    public func remove(_ path: LocalPath) {
        memory.withLock { m in
            guard let old = m.byPath.removeValue(forKey: path) else { return }
            if m.byFingerprint[old] == path { m.byFingerprint[old] = nil }
        }
    }

    /// Follows a rename: the file (or every file below the folder) at `old` is now at `new`.
    public func move(_ old: LocalPath, to new: LocalPath) {
        memory.withLock { m in
            let moving = m.byPath.filter { $0.key.isWithin(old) }
            for (path, fingerprint) in moving {
                let moved = path.moved(from: old, to: new)
                m.byPath[path] = nil
                m.byPath[moved] = fingerprint
                m.byFingerprint[fingerprint] = moved
            }
        }
    }

    public func identity(takenAt path: LocalPath) -> FileIdentity? {
        memory.withLock { $0.byPath[path] }.map { FileIdentity(device: $0.device, inode: $0.inode) }
    }

    public func status(of fingerprint: FileFingerprint, at path: LocalPath) -> TakenStatus {
        memory.withLock { m in
            if let known = m.byFingerprint[fingerprint] { return known == path ? .taken : .takenAt(known) }
            if let known = m.byPath[path], known.size == fingerprint.size,
               known.mtimeNanoseconds == fingerprint.mtimeNanoseconds {
                return .taken
            }
            return .new
        }
    }
}
