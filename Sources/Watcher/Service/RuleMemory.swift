import Platform

/// What a running rule's watcher asks about every file: the files the rule took (loaded
/// from the queue database when it starts), and, while the rule's baseline is still to be
/// taken, a recorder of everything there.
///
/// A rule added without `existing` leaves alone what its folder held when it was added.
/// When that could not be recorded then (the folder was not there, or the rule was written
/// into the config by hand), the first whole walk of the folder is that moment: while
/// `isBaselining`, every file asked about is recorded and called taken, so the walk hands
/// over nothing; `endBaseline()` (on the first status that says the tree is watched, which
/// the watcher publishes right after that walk, on the same thread) turns the recording
/// into memory.
final class RuleMemory: TakenFiles {
    let taken: TakenSet
    private let recording: Locked<[LocalPath: FileFingerprint]?>

    init(taken: TakenSet, baselining: Bool) {
        self.taken = taken
        recording = Locked(baselining ? [:] : nil)
    }

    var isBaselining: Bool { recording.withLock { $0 != nil } }

    func status(of fingerprint: FileFingerprint, at path: LocalPath) -> TakenStatus {
        let recorded = recording.withLock { (recording: inout [LocalPath: FileFingerprint]?) -> Bool in
            guard recording != nil else { return false }
            recording?[path] = fingerprint
            return true
        }
        return recorded ? .taken : taken.status(of: fingerprint, at: path)
    }

    func identity(takenAt path: LocalPath) -> FileIdentity? { taken.identity(takenAt: path) }

    /// Ends the baseline: what was recorded becomes memory, and is returned to be written
    /// down. Nil when no baseline was being taken.
    func endBaseline() -> [(LocalPath, FileFingerprint)]? {
        guard let files = recording.withLock({ (recording: inout [LocalPath: FileFingerprint]?) in
            defer { recording = nil }
            return recording
        }) else { return nil }
        for (path, fingerprint) in files { taken.insert(fingerprint, at: path) }
        return files.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
