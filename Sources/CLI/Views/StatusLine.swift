import Platform
import Queue

/// The tray line: `12 of 40 uploaded, 2 need attention`, and why the queue is not moving.
public enum StatusLine {
    /// A few lines, without a trailing newline.
    ///
    /// - Parameter agentRunning: whether an agent answers on the control socket; when not,
    ///   queued work waits, and the line says how to start it.
    ///   - watchTroubles: what keeps watch rules from their job, one line each (`camera: ...`).
    public static func render(_ summary: QueueSummary, agentRunning: Bool, watchTroubles: [String] = []) -> String {
        var lines = [headline(summary)]
        if let paused = summary.pausedReason {
            lines.append("paused: " + pausedText(paused))
        }
        lines += watchTroubles.map { "watch " + $0 }
        if !agentRunning {
            lines.append("the agent is not running: start it with `instant-upload run`")
        }
        return lines.joined(separator: "\n")
    }

    static func headline(_ summary: QueueSummary) -> String {
        guard summary.total() > 0 else { return "nothing queued" }
        var parts: [String] = []
        if summary.total(.upload) > 0 {
            parts.append("\(summary.count(.completed, .upload)) of \(summary.total(.upload)) uploaded")
        }
        if summary.total(.download) > 0 {
            parts.append("\(summary.count(.completed, .download)) of \(summary.total(.download)) downloaded")
        }
        let attention = summary.needAttention
        if attention > 0 { parts.append(attention == 1 ? "1 needs attention" : "\(attention) need attention") }
        return parts.joined(separator: ", ")
    }

    /// The agent stores a reason code (`offline`) or a sentence; codes read as their message.
    static func pausedText(_ stored: String) -> String {
        if let code = ReasonCode(rawValue: stored) { return code.defaultMessage }
        return DisplayText.escape(stored)
    }
}
