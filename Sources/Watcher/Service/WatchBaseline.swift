import Platform
import Queue

/// The files a folder holds when its rule is added: recorded so the rule leaves them alone.
public enum WatchBaseline {
    /// Records what `folder` holds now as the baseline of `rule` (whose memory must exist).
    /// Returns how many files that is, or nil when the folder cannot be walked now (not
    /// there, not a folder, unreadable): then the agent takes the baseline when it first
    /// sees the folder.
    public static func take(rule: String, folder: LocalPath, store: QueueStore) throws -> Int? {
        var files: [TakenFile] = []
        let summary = ReconcileScanner(root: folder).scan(isKnown: { _, _ in false }, onNew: { file in
            files.append(TakenFile(path: file.path, fingerprint: file.fingerprint, kind: .baseline))
        })
        if summary.rootError != nil { return nil }
        try store.recordBaseline(rule: rule, files: files)
        return files.count
    }
}
