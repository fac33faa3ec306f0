import FoundationEssentials
import Platform
import Queue

/// `queue --follow` when standard output is not a terminal: one line per change, for logs
/// and pipes. A row that appears, moves to another state, gets another reason, passes a
/// tenth of its size, or leaves the queue makes one line; nothing else does.
public enum QueueChanges {
    /// What a row looks like for change detection: light enough to read for every row.
    public struct Entry: Sendable, Equatable {
        public var state: TransferState
        public var reasonCode: String?
        public var reasonMessage: String?
        public var bytesDone: Int64
        public var bytesTotal: Int64

        public init(state: TransferState, reasonCode: String? = nil, reasonMessage: String? = nil, bytesDone: Int64 = 0,
                    bytesTotal: Int64 = 0) {
            self.state = state; self.reasonCode = reasonCode; self.reasonMessage = reasonMessage
            self.bytesDone = bytesDone; self.bytesTotal = bytesTotal
        }

        /// Progress in tenths, so a big file says how far it is without a line per chunk.
        var tenth: Int { bytesTotal > 0 ? Int(saturating: min(1, max(0, Double(bytesDone) / Double(bytesTotal))) * 10) : 0 }
    }

    /// The IDs whose line changed from `before` to `after`, in order: new or changed rows, then
    /// rows that are gone.
    public static func changed(from before: [Int64: Entry], to after: [Int64: Entry]) -> (changed: [Int64], gone: [Int64]) {
        let changed = after.keys.sorted().filter { id in
            guard let old = before[id], let new = after[id] else { return true }
            if old.state != new.state || old.reasonCode != new.reasonCode || old.reasonMessage != new.reasonMessage { return true }
            return new.state == .inProgress && new.tenth != old.tenth
        }
        let gone = before.keys.sorted().filter { after[$0] == nil }
        return (changed, gone)
    }

    /// `14:03:07 #17 IMG_0042.jpg: uploading, 40%, 11 MB of 27 MB`.
    public static func line(_ row: Transfer, now: Int64, timeZone: TimeZone? = nil) -> String {
        "\(clock(now, timeZone)) #\(row.id) \(row.name): \(what(row, now: now))"
    }

    /// `14:03:07 #17: removed from the queue`.
    public static func goneLine(_ id: Int64, now: Int64, timeZone: TimeZone? = nil) -> String {
        "\(clock(now, timeZone)) #\(id): removed from the queue"
    }

    static func what(_ row: Transfer, now: Int64) -> String {
        let reason = row.reason.map { DisplayText.escape($0.message) }
        switch row.state {
        case .queued:
            if let code = row.reason?.code, [.offline, .wifi, .paused, .folderMissing].contains(code) { return reason ?? "waiting" }
            return "queued" + (reason.map { " (\($0))" } ?? "")
        case .inProgress:
            let verb = row.direction == .upload ? "uploading" : "downloading"
            guard row.bytesTotal > 0 else { return verb }
            if row.bytesDone >= row.bytesTotal {
                return row.direction == .upload ? "all \(HumanFormat.bytes(row.bytesTotal)) sent, finishing on the server"
                                                 : "all \(HumanFormat.bytes(row.bytesTotal)) received, finishing"
            }
            let percent = Int(saturating: min(1, max(0, Double(row.bytesDone) / Double(row.bytesTotal))) * 100)
            return "\(verb), \(percent)%, \(HumanFormat.bytes(row.bytesDone)) of \(HumanFormat.bytes(row.bytesTotal))"
        case .retrying:
            var text = "retrying"
            if let next = row.nextAttemptAt, next > now { text += " in \(HumanFormat.duration(milliseconds: next - now))" }
            return text + (reason.map { ": \($0)" } ?? "")
        case .failed:
            guard let r = row.reason else { return "failed" }
            return "failed: \(DisplayText.escape(r.message)) (\(r.code.rawValue)); \(DisplayText.escape(row.actionText(r)))"
        case .completed:
            return row.direction == .upload ? "uploaded as \(row.remotePathText)" : "downloaded to \(row.localPath.display)"
        }
    }

    static func clock(_ milliseconds: Int64, _ timeZone: TimeZone?) -> String {
        String(HumanFormat.timestamp(milliseconds, timeZone: timeZone).suffix(5)) + ":" + seconds(milliseconds, timeZone)
    }

    private static func seconds(_ milliseconds: Int64, _ timeZone: TimeZone?) -> String {
        let s = Int(((milliseconds / 1000) % 60 + 60) % 60)
        return s < 10 ? "0\(s)" : "\(s)"
    }
}
