import Glibc
import Platform
import Queue

/// The files a folder holds when its rule is added: recorded so the rule leaves them alone.
public enum WatchBaseline {
    /// What was recorded.
    public enum Outcome: Sendable, Equatable {
        /// This many files were there, and are left alone.
        case files(Int)
        /// The folder is not there (a card not inserted): the baseline is empty, and what
        /// the folder holds when it appears is uploaded.
        case folderMissing
        /// The folder cannot be walked now (unreadable, not a folder): the agent takes the
        /// baseline when it first can.
        case notTaken(SystemError)
    }

    /// Records what `folder` holds now as the baseline of `rule` (whose memory must exist).
    public static func take(rule: String, folder: LocalPath, store: QueueStore) throws -> Outcome {
        var files: [TakenFile] = []
        let summary = ReconcileScanner(root: folder).scan(isKnown: { _, _ in false }, onNew: { file in
            files.append(TakenFile(path: file.path, fingerprint: file.fingerprint, kind: .baseline))
        })
        if let error = summary.rootError {
            guard [ENOENT, ENOTDIR].contains(error.errno), WatchWorker.isMissing(folder) else { return .notTaken(error) }
            try store.recordBaseline(rule: rule, files: [])
            return .folderMissing
        }
        try store.recordBaseline(rule: rule, files: files)
        return .files(files.count)
    }
}
