import CLI
import TestSupport
import Foundation
import Platform
import Queue

/// 2026-11-29 14:03:07.250 UTC, the moment the view tests look from.
let fixedNow: Int64 = 1_795_960_987_250
let utc = TimeZone(identifier: "UTC")!

/// A row as the store would read it; only what a test cares about is named.
func makeTransfer(id: Int64, _ direction: Direction = .upload, state: TransferState = .queued,
                  local: LocalPath? = nil, remote: String? = nil, account: String = "alice",
                  reason: Reason? = nil, attempts: Int = 0, nextAttemptAt: Int64? = nil,
                  bytesDone: Int64 = 0, bytesTotal: Int64 = 0, uploadURL: String? = nil, sha256: String? = nil,
                  checkpointOffset: Int64 = 0, counters: ResumeCounters = ResumeCounters(),
                  createdAt: Int64 = fixedNow - 60_000, startedAt: Int64? = nil, completedAt: Int64? = nil) -> Transfer {
    let name = "IMG_\(id).jpg"
    return Transfer(id: id, direction: direction, origin: .manual, accountID: 1, accountName: account,
                    localPath: local ?? LocalPath("/home/alice/Pictures/\(name)"), remotePath: remote ?? "/Photos/\(name)",
                    state: state, reason: reason, attempts: attempts, nextAttemptAt: nextAttemptAt,
                    bytesDone: bytesDone, bytesTotal: bytesTotal, uploadURL: uploadURL,
                    checkpoint: Checkpoint(offset: checkpointOffset), sha256: sha256, counters: counters,
                    createdAt: createdAt, startedAt: startedAt, completedAt: completedAt)
}

/// Parses `words` as `instant-upload ...`.
func parse(_ words: String...) throws(UsageError) -> ParseOutcome {
    try ArgumentParser.parse(words, as: CommandSpecs.instantUpload)
}

/// The parsed arguments, failing the test when the line was refused or asked for help.
func parsed(_ words: [String], as root: CommandSpec = CommandSpecs.instantUpload) throws -> ParsedArguments {
    guard case .run(let arguments) = try ArgumentParser.parse(words, as: root) else {
        throw TestFailureText("expected arguments, got help for \(words)")
    }
    return arguments
}

/// The usage error a line gives, or nil when it parses.
func usageError(_ words: String...) -> UsageError? {
    do {
        _ = try ArgumentParser.parse(words, as: CommandSpecs.instantUpload)
        return nil
    } catch {
        return error
    }
}

struct TestFailureText: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Parses JSON text into Foundation objects, the way a script would see it.
func jsonObject(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
}

/// A summary with these counts, read back from a real queue in a temporary folder.
///
/// TODO: `QueueSummary` has no public initialiser, so the tests cannot build one directly;
/// once Queue adds `public init(counts:pausedReason:)`, build it here without a store.
func makeSummary(uploads: [TransferState: Int] = [:], downloads: [TransferState: Int] = [:],
                 paused: String? = nil) throws -> QueueSummary {
    let folder = TemporaryFolder("iu-cli-summary")
    let store = try QueueStore(path: folder.path + "/queue.sqlite3")
    let account = try store.addAccount(name: "alice", webdavURL: "http://127.0.0.1:1/dav/", tusURL: "http://127.0.0.1:1/files/",
                                       username: "alice")
    for (direction, counts) in [(Direction.upload, uploads), (.download, downloads)] {
        for (state, count) in counts where count > 0 {
            let items = (0..<count).map {
                NewTransfer(direction: direction, origin: .manual, accountID: account.id,
                            localPath: LocalPath("/tmp/\(state.rawValue)-\($0)"), remotePath: "/\(state.rawValue)-\($0)")
            }
            for id in try store.enqueue(items) {
                guard state != .queued else { continue }
                try store.start(id, resumedAt: 0)
                switch state {
                case .completed: try store.complete(id, sha256: nil, bytes: 0)
                case .failed: try store.fail(id, reason: Reason(.quota))
                case .retrying: try store.retryLater(id, reason: Reason(.timeout), at: fixedNow, attempts: 1)
                case .queued, .inProgress: break
                }
            }
        }
    }
    try store.setAgentValue("paused_reason", paused)
    return try store.summary()
}
