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
