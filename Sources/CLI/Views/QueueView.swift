import FoundationEssentials
import Platform
import Queue

/// The whole queue for a terminal, grouped like the seeds' uploads view: in progress,
/// retrying, queued, failed, completed. Every row that is not moving says why.
///
/// A pure function of rows the caller read: it takes at most `rowsPerGroup` rows of each
/// group (the caller fetches `LIMIT N` and the group's count), and says how many more there
/// are and the command that shows them all.
public struct QueueView: Sendable {
    /// One state's rows, as fetched, and how many rows that state has in all.
    public struct Group: Sendable, Equatable {
        public var state: TransferState
        public var rows: [Transfer]
        public var total: Int

        /// `total` defaults to the rows given; it is never taken as less than that.
        public init(state: TransferState, rows: [Transfer], total: Int? = nil) {
            self.state = state; self.rows = rows; self.total = max(total ?? rows.count, rows.count)
        }
    }

    /// The order groups appear in, whatever order they are given in.
    public static let order: [TransferState] = [.inProgress, .retrying, .queued, .failed, .completed]

    public var groups: [Group]
    /// Milliseconds since the epoch, for "next try in 12 s".
    public var now: Int64
    /// Terminal columns.
    public var width: Int
    /// Current speed of in-progress transfers by ID, in bytes per second.
    public var speeds: [Int64: Double]
    /// Rows shown per group; `nil` shows every row given (`queue --state S`).
    public var rowsPerGroup: Int?
    /// The zone times are shown in; nil for the system's.
    public var timeZone: TimeZone?

    public init(groups: [Group], now: Int64, width: Int = 80, speeds: [Int64: Double] = [:], rowsPerGroup: Int? = 10,
                timeZone: TimeZone? = nil) {
        self.groups = groups; self.now = now; self.width = max(40, width); self.speeds = speeds
        self.rowsPerGroup = rowsPerGroup; self.timeZone = timeZone
    }

    /// The text to print, without a trailing newline.
    public func render() -> String {
        let present = Self.order.compactMap { state in groups.first { $0.state == state && $0.total > 0 } }
        guard !present.isEmpty else {
            if groups.count == 1 { return "nothing " + Self.emptyWord(groups[0].state) }
            return "nothing queued"
        }
        return present.map(render).joined(separator: "\n\n")
    }

    static func title(_ state: TransferState) -> String {
        switch state {
        case .inProgress: "In progress"
        case .retrying: "Retrying"
        case .queued: "Queued"
        case .failed: "Failed"
        case .completed: "Completed"
        }
    }

    static func emptyWord(_ state: TransferState) -> String {
        state == .inProgress ? "in progress" : state.rawValue
    }

    func render(_ group: Group) -> String {
        let shown = rowsPerGroup.map { Array(group.rows.prefix($0)) } ?? group.rows
        var text = GroupText(self, state: group.state, total: group.total, idWidth: Self.idWidth(shown))
        for row in shown { text.add(row) }
        return text.finish()
    }

    /// One group's text, written a row at a time as the rows come: `queue --state failed`
    /// lists thousands of rows without holding them.
    struct GroupText {
        private let view: QueueView
        private let state: TransferState
        private let total: Int
        private let idWidth: Int
        private let indent: String
        private let nextIndent: String
        private var text: String
        private var shown = 0
        private var places = PlaceInLine()

        /// `idWidth` is what `QueueView.idWidth` gives for the rows to come.
        init(_ view: QueueView, state: TransferState, total: Int, idWidth: Int) {
            self.view = view; self.state = state; self.total = total; self.idWidth = idWidth
            indent = QueueView.detailIndent(idWidth: idWidth)
            nextIndent = indent + "  "
            text = "\(QueueView.title(state)) (\(total))"
        }

        mutating func add(_ row: Transfer) {
            shown += 1
            text += "\n"
            text += view.headLine(row, idWidth: idWidth)
            for line in view.detailLines(row, position: places.next(row.direction)) {
                text += "\n"
                // A completed row ends in a path; a path broken at its spaces cannot be copied.
                if state == .completed { text += indent; text += line; continue }
                text += TextLayout.wrap(line, width: view.width, indent: nextIndent, firstIndent: indent)
            }
        }

        /// Hands the text so far to `eager` once it has gathered a piece (`EagerOutput.pass`);
        /// what follows goes on from there.
        mutating func handOn(to eager: EagerOutput?) { eager?.pass(&text) }

        /// The text, ending with how many rows of the group were not shown.
        consuming func finish() -> String {
            let hidden = total - shown
            if hidden > 0 {
                text += "\n  … and \(hidden) more"
                if view.rowsPerGroup != nil { text += " (instant-upload queue --state \(state.rawValue))" }
            }
            return text
        }
    }

    /// Columns the `#ID` column takes for these rows: the largest number's.
    static func idWidth(_ rows: [Transfer]) -> Int { idWidth(largestID: rows.lazy.map(\.id).max()) }

    /// The same, from the largest ID alone (`QueueStore.largestID`), before any row is read.
    static func idWidth(largestID: Int64?) -> Int { largestID.map { "#\($0)".utf8.count } ?? 2 }

    /// Each row's place in line among the rows of its direction (for queued rows).
    static func positions(_ rows: [Transfer]) -> [Int] {
        var places = PlaceInLine()
        return rows.map { places.next($0.direction) }
    }

    /// Places in line counted as rows come, one line per direction.
    struct PlaceInLine {
        private var uploads = 0, downloads = 0

        /// The place of the next row going `direction`.
        mutating func next(_ direction: Direction) -> Int {
            if direction == .upload { uploads += 1; return uploads }
            downloads += 1
            return downloads
        }
    }

    /// One row as lines, unwrapped: the head line, then what it is doing or why it is not,
    /// indented under its name. The caller wraps them (`queue`) or clips them (`--follow`).
    func rowLines(_ row: Transfer, position: Int, idWidth: Int) -> [String] {
        let indent = Self.detailIndent(idWidth: idWidth)
        return [headLine(row, idWidth: idWidth)] + detailLines(row, position: position).map { indent + $0 }
    }

    /// Where a row's lines under its head line start: under its name.
    static func detailIndent(idWidth: Int) -> String { String(repeating: " ", count: 2 + idWidth + 1) }

    /// What a row is doing or why it is not, one line each, not indented.
    func detailLines(_ row: Transfer, position: Int) -> [String] {
        var detail: [String]
        switch row.state {
        case .inProgress: detail = progressLines(row)
        case .retrying: detail = [retryingLine(row)]
        case .queued: detail = [queuedLine(row, position: position)]
        case .failed: detail = failedLines(row)
        case .completed: detail = [completedLine(row)]
        }
        if let note = row.versionNote { detail.append(note) }
        for note in row.shownNotes { detail.append("note: " + note) }
        return detail
    }

    /// `  #17 IMG_0042.jpg to alice:/Photos`. When it does not fit, the folder loses its
    /// start (`alice:…/Holiday`) and then the name its middle, so both ends stay readable.
    func headLine(_ row: Transfer, idWidth: Int) -> String {
        let lead = "  " + TextLayout.pad("#\(row.id)", to: idWidth) + " "
        let suffix = row.cancelRequested ? " (cancelling)" : ""
        let budget = width - TextLayout.length(lead) - suffix.utf8.count
        var name = row.name
        var folder = row.remoteFolderText
        let fixed = 1 + row.routeWord.utf8.count + 1
        let nameLength = TextLayout.length(name)
        if nameLength + fixed + TextLayout.length(folder) > budget {
            let account = row.accountPrefix
            let room = max(10, budget - fixed - min(nameLength, 24)) - account.count
            folder = account + TextLayout.truncateStart(DisplayText.escape(row.remoteFolder), to: max(6, room))
            name = TextLayout.truncateMiddle(name, to: max(8, budget - fixed - folder.count))
        }
        var line = lead
        line.reserveCapacity(lead.utf8.count + name.utf8.count + folder.utf8.count + 20)
        line += name; line += " "; line += row.routeWord; line += " "; line += folder; line += suffix
        return line
    }

    /// `[#####---------]  45%  12 MB of 27 MB, 1.5 MB/s, 10 s left`; once every byte is
    /// sent, `all 27 MB sent, finishing on the server` instead of a full bar that seems stuck.
    func progressLines(_ row: Transfer) -> [String] {
        let barWidth = min(30, max(10, width - 50))
        var text: String
        if row.bytesTotal > 0, row.bytesDone >= row.bytesTotal {
            let all = HumanFormat.bytes(row.bytesTotal)
            text = row.direction == .upload ? "all \(all) sent, finishing on the server" : "all \(all) received, finishing"
        } else if row.bytesTotal > 0 {
            let fraction = min(1, max(0, Double(row.bytesDone) / Double(row.bytesTotal)))
            let filled = Int(saturating: fraction * Double(barWidth))
            let percent = Int(saturating: fraction * 100)
            text = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "] "
            text += TextLayout.padLeft("\(percent)%", to: 4) + "  "
            text += "\(HumanFormat.bytes(row.bytesDone)) of \(HumanFormat.bytes(row.bytesTotal))"
            if let speed = speeds[row.id] { text += speedText(speed, left: row.bytesTotal - row.bytesDone) }
        } else {
            text = "\(HumanFormat.bytes(row.bytesDone)) so far, size not known yet"
            if let speed = speeds[row.id] { text += speedText(speed, left: 0) }
        }
        var lines = [text]
        if let reason = row.reason { lines.append("note: " + DisplayText.escape(reason.message)) }
        return lines
    }

    /// `, 1.5 MB/s, 10 s left`, or `, stalled` when nothing moved lately.
    func speedText(_ speed: Double, left: Int64) -> String {
        guard speed > 0 else { return ", stalled" }
        var text = ", \(HumanFormat.rate(speed))"
        if left > 0 { text += ", \(HumanFormat.duration(seconds: Double(left) / speed)) left" }
        return text
    }

    /// `the connection dropped; attempt 3, next try in 12 s; resumes at 12 MB of 27 MB`
    func retryingLine(_ row: Transfer) -> String {
        var text = row.reason.map { DisplayText.escape($0.message) } ?? "retrying"
        text += "; attempt \(max(1, row.attempts))"
        if let next = row.nextAttemptAt {
            text += next > now ? ", next try in \(HumanFormat.duration(milliseconds: next - now))" : ", trying again now"
        }
        if row.bytesDone > 0, row.bytesTotal > 0 {
            if row.bytesDone >= row.bytesTotal {
                // Nothing is left to send: the next try asks the server to finish the file.
                text += row.direction == .upload
                    ? "; all \(HumanFormat.bytes(row.bytesTotal)) sent, the server is finishing the file"
                    : "; all \(HumanFormat.bytes(row.bytesTotal)) received, finishing the file"
            } else {
                text += Self.resumesAt(row)
            }
        }
        return text
    }

    /// `; resumes at 12 MB of 27 MB`, for a row stopped part way; empty for one not started.
    static func resumesAt(_ row: Transfer) -> String {
        guard row.bytesDone > 0, row.bytesTotal > row.bytesDone else { return "" }
        return "; resumes at \(HumanFormat.bytes(row.bytesDone)) of \(HumanFormat.bytes(row.bytesTotal))"
    }

    /// Why a queued row waits: the gate holding it (network, Wi-Fi, paused) or its place in
    /// line; then, for one stopped part way (paused, say), where it goes on from.
    func queuedLine(_ row: Transfer, position: Int) -> String {
        let turn = "waiting its turn (#\(position))"
        let why: String
        switch row.reason?.code {
        case nil: why = turn
        case .offline, .wifi, .paused, .credentials, .diskFull, .folderMissing: why = DisplayText.escape(row.reason!.message)
        default: why = DisplayText.escape(row.reason!.message) + "; " + turn
        }
        return why + Self.resumesAt(row)
    }

    /// The specific reason, then what the person can do, with this row's ID filled in.
    func failedLines(_ row: Transfer) -> [String] {
        guard let reason = row.reason else {
            return ["no reason was recorded", "`instant-upload retry \(row.id)` tries again"]
        }
        return [DisplayText.escape(reason.message) + " (\(reason.code.rawValue))", row.actionText(reason)]
    }

    /// Uploads name where the file is now; downloads name the exact local file.
    func completedLine(_ row: Transfer) -> String {
        let when = row.completedAt.map { " " + HumanFormat.timestamp($0, timeZone: timeZone) } ?? ""
        if row.direction == .upload { return "uploaded\(when) as \(row.remotePathText)" }
        return "downloaded\(when) to \(row.localPath.display)"
    }
}
