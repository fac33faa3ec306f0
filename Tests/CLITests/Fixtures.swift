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

/// A summary with these counts, as the store's `summary()` would give it.
func makeSummary(uploads: [TransferState: Int] = [:], downloads: [TransferState: Int] = [:],
                 paused: String? = nil) -> QueueSummary {
    QueueSummary(counts: [.upload: uploads, .download: downloads], pausedReason: paused)
}

/// Batch figures with these counts; the rest zero.
func makeBatch(uploading: Int = 0, downloading: Int = 0, waiting: Int = 0, retrying: [ReasonCode: Int] = [:], failed: Int = 0,
               files: (done: Int, total: Int) = (0, 0), bytes: (done: Int64, total: Int64) = (0, 0), left: Int64? = nil,
               rate: Double? = nil) -> BatchFigures {
    var b = BatchFigures()
    b.uploading = uploading; b.downloading = downloading; b.waiting = waiting; b.retrying = retrying; b.failed = failed
    b.filesDone = files.done; b.filesTotal = files.total; b.bytesDone = bytes.done; b.bytesTotal = bytes.total
    b.bytesLeft = left ?? max(0, bytes.total - bytes.done)
    b.rate = rate
    return b
}
