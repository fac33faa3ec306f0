import FoundationEssentials
import Platform
import Queue

/// `instant-upload show ID`: everything a person might want to know about one transfer.
public enum TransferDetail {
    /// Labels take this many columns, so details of different transfers line up.
    static let labelColumn = 16

    /// Labelled lines, without a trailing newline. Fields that do not apply are left out;
    /// the upload URL appears as its host only, since the rest can carry credentials.
    public static func render(_ t: Transfer, now: Int64, speed: Double? = nil, width: Int = 80,
                              timeZone: TimeZone? = nil) -> String {
        var rows: [(String, String)] = []
        func add(_ label: String, _ value: String?) { if let value { rows.append((label, value)) } }
        func time(_ ms: Int64?) -> String? { ms.map { HumanFormat.moment($0, now: now, timeZone: timeZone) } }

        add("state", t.state.rawValue.replacing("_", with: " ") + (t.cancelRequested ? " (cancel requested)" : ""))
        add("direction", "\(t.direction.rawValue), \(originText(t))")
        add("account", t.accountName.isEmpty ? nil : DisplayText.escape(t.accountName))
        if t.direction == .upload {
            add("from", t.localPath.display)
            add("to", t.remotePathText)
        } else {
            add("from", t.remotePathText)
            if t.localPath.bytes.isEmpty {
                add("to", "Local Drive in your downloads folder; the name is chosen when it starts")
            } else {
                add("to", t.localPath.display)
                add("partial file", t.state == .completed ? nil : t.localPath.display + ".part")
            }
        }
        add("version", t.versionNote)
        for note in t.shownNotes { add("note", note) }
        add("progress", progressText(t, speed: speed))
        add("checkpoint", "byte \(DisplayText.grouped(t.checkpoint.offset))"
            + (t.checkpoint.hashState != nil ? ", with the SHA-256 state up to there" : ""))
        add("attempts", String(t.attempts))
        if let reason = t.reason {
            add("reason", DisplayText.escape(reason.message))
            add("detail", reason.detail.map { DisplayText.escape($0) })
            add("reason code", reason.code.rawValue + (reason.code.isTransient ? " (retried by itself)" : " (needs you)"))
            add("what to do", DisplayText.escape(t.actionText(reason)))
        }
        add("next try", t.state == .retrying ? time(t.nextAttemptAt) : nil)
        add("sha-256", t.sha256.map { DisplayText.escape($0) })
        add("upload host", t.uploadHost.map { DisplayText.escape($0) })
        add("upload expires", time(t.uploadExpiresAt))
        add("etag", t.etag.map { DisplayText.escape($0) })
        add("this run", "from byte \(DisplayText.grouped(t.counters.resumedAt)): "
            + "\(DisplayText.grouped(t.counters.bytesRead)) bytes read, \(DisplayText.grouped(t.counters.bytesHashed)) hashed")
        if let fp = t.fingerprint {
            add(t.direction == .download ? "file placed" : "source file", "device \(fp.device), inode \(fp.inode), \(DisplayText.grouped(fp.size)) bytes, modified "
                + HumanFormat.timestamp(fp.mtimeNanoseconds / 1_000_000, timeZone: timeZone))
        }
        add("rules", t.ignoreRules ? "ignored for this transfer (--now)" : nil)
        add("created", time(t.createdAt))
        add("started", time(t.startedAt))
        add("completed", time(t.completedAt))

        // Prose wraps under its label; paths, hashes and URLs stay whole so they can be copied.
        let prose: Set<String> = ["direction", "progress", "reason", "detail", "note", "version", "what to do", "this run", "source file"]
        let hanging = String(repeating: " ", count: 2 + labelColumn)
        let lines = rows.map { label, value in
            let lead = "  " + TextLayout.pad(label, to: labelColumn)
            guard prose.contains(label) else { return lead + value }
            return TextLayout.wrap(value, width: width, indent: hanging, firstIndent: lead)
        }
        return (["#\(t.id) \(t.name)"] + lines).joined(separator: "\n")
    }

    static func originText(_ t: Transfer) -> String {
        switch t.origin {
        case .manual: "asked for with a command"
        case .share: "sent from the file manager"
        case .auto: "instant upload" + (t.watchRule.map { " (rule \(DisplayText.escape($0)))" } ?? "")
        }
    }

    static func progressText(_ t: Transfer, speed: Double?) -> String {
        var text = "\(DisplayText.grouped(t.bytesDone)) of \(DisplayText.grouped(t.bytesTotal)) bytes"
        if t.state != .completed, t.bytesTotal > 0, t.bytesDone >= t.bytesTotal {
            return text + (t.direction == .upload ? ", all sent: the server is finishing the file" : ", all received: finishing the file")
        }
        if t.bytesTotal > 0 {
            let percent = Int(saturating: min(1, max(0, Double(t.bytesDone) / Double(t.bytesTotal))) * 100)
            text += " (\(HumanFormat.bytes(t.bytesDone)) of \(HumanFormat.bytes(t.bytesTotal)), \(percent)%)"
        }
        if let speed, speed > 0, t.state == .inProgress {
            text += ", \(HumanFormat.rate(speed))"
            let left = t.bytesTotal - t.bytesDone
            if t.bytesTotal > 0, left > 0 { text += ", \(HumanFormat.duration(seconds: Double(left) / speed)) left" }
        }
        return text
    }
}
