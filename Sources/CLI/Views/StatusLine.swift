import Platform
import Queue

/// The tray line: what moves, what is held and why, and how long the batch has left:
/// `3 uploading, 264 waiting, 2 retrying (server busy), 1 failed; 30 of 300 files, 120 MB of
/// 193 MB, 14 MB/s, about 8 s left`. Then why the queue is paused, and whether the agent runs.
public enum StatusLine {
    /// A few lines, without a trailing newline.
    ///
    /// - Parameters:
    ///   - pausedReason: what the agent says holds the whole queue (a reason code or a sentence).
    ///   - agentRunning: whether an agent answers on the control socket; when not, queued
    ///     work waits, and the line says how to start it.
    ///   - watch: what the watch rules report, one line each after `watch ` (`camera: ...`):
    ///     what keeps them from their job, then the files they hold back for now
    ///     (`WatchCommands.Standing.statusLines`).
    public static func render(_ batch: BatchFigures, pausedReason: String? = nil, agentRunning: Bool,
                              watch: [String] = []) -> String {
        var lines = [headline(batch)]
        if pausedReason == ReasonCode.paused.rawValue {
            lines.append("paused by you: nothing starts until `instant-upload resume --all`")
        } else if let pausedReason {
            lines.append("paused: " + pausedText(pausedReason))
        }
        lines += watch.map { "watch " + $0 }
        lines += takenAsItWasLines(batch)
        if !agentRunning {
            lines.append("the agent is not running: start it with `instant-upload run`")
        }
        return lines.joined(separator: "\n")
    }

    /// How many files of a kind `status` names before it counts the rest.
    static let namedPerKind = 3

    /// `#17 IMG_0042.jpg: taken as it was after 10 min, though …: what is sent may be damaged`,
    /// for the first few of the batch, then how many more.
    static func takenAsItWasLines(_ b: BatchFigures) -> [String] {
        var lines = b.takenAsItWasFirst.map { "#\($0.id) \($0.path.lastComponent.display): \(DisplayText.escapeControls($0.note))" }
        let more = b.takenAsItWas - lines.count
        if more > 0 {
            lines.append("and \(n(more)) more \(more == 1 ? "file" : "files") taken as \(more == 1 ? "it was" : "they were") (`instant-upload queue` gives each one's note)")
        }
        return lines
    }

    static func headline(_ b: BatchFigures) -> String {
        var held: [String] = []
        func add(_ count: Int, _ words: String) { if count > 0 { held.append("\(n(count)) \(words)") } }
        add(b.uploading, "uploading")
        add(b.downloading, "downloading")
        add(b.waiting, "waiting")
        add(b.waitingForNetwork, "waiting for network")
        add(b.waitingForWiFi, "waiting for Wi-Fi")
        add(b.waitingForPower, "waiting for mains power")
        add(b.paused, "paused by you")
        let retrying = b.retrying.values.reduce(0, +)
        if retrying > 0 { held.append("\(n(retrying)) retrying (\(retryingWhy(b.retrying)))") }
        add(b.failed, "failed")

        guard !held.isEmpty else {
            guard b.filesTotal > 0 else { return "nothing queued" }
            return "all done: \(files(b.filesTotal))" + (b.bytesTotal > 0 ? ", \(HumanFormat.bytes(b.bytesTotal))" : "")
        }
        guard b.filesTotal > 0 else { return held.joined(separator: ", ") }
        var progress = "\(n(b.filesDone)) of \(files(b.filesTotal))"
        if b.bytesTotal > 0 { progress += ", \(HumanFormat.bytes(b.bytesDone)) of \(HumanFormat.bytes(b.bytesTotal))" }
        if b.active > 0, let rate = b.rate, rate > 0 {
            progress += ", \(HumanFormat.rate(rate))"
            if let eta = b.eta { progress += ", about \(HumanFormat.duration(seconds: eta)) left" }
        }
        return held.joined(separator: ", ") + "; " + progress
    }

    static func files(_ count: Int) -> String { count == 1 ? "1 file" : "\(n(count)) files" }

    /// `29,972`: counts read at a glance.
    static func n(_ count: Int) -> String { DisplayText.grouped(count) }

    /// `server busy`, or `2 server busy, 1 connection dropped` when the reasons differ.
    static func retryingWhy(_ byReason: [ReasonCode: Int]) -> String {
        var counts: [String: Int] = [:]
        for (code, n) in byReason { counts[shortWords(code), default: 0] += n }
        let ordered = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        if ordered.count == 1 { return ordered[0].key }
        return ordered.map { "\(n($0.value)) \($0.key)" }.joined(separator: ", ")
    }

    /// A reason in two or three words, for counts on one line.
    static func shortWords(_ code: ReasonCode) -> String {
        switch code {
        case .serverBusy: "server busy"
        case .maintenance: "server maintenance"
        case .serverError: "server error"
        case .timeout: "no answer"
        case .connectionReset: "connection dropped"
        case .offline: "no network"
        case .unreachable: code.defaultMessage
        case .checksumMismatch: "damaged chunk"
        case .sourceChanged, .uploadExpired, .uploadLost: "starting again"
        default: code.rawValue.replacing("_", with: " ")
        }
    }

    /// The agent stores a reason code (`offline`) or a sentence; codes read as their message.
    static func pausedText(_ stored: String) -> String {
        if let code = ReasonCode(rawValue: stored) { return code.defaultMessage }
        return DisplayText.escape(stored)
    }
}
