@testable import CLI
import Foundation
import Glibc
import Platform
import Queue
import Testing

@Suite("JSON output")
struct JSONOutputTests {
    @Test("status --json has every count, the pause reason as null, and per-direction counts")
    func status() throws {
        let summary = makeSummary(uploads: [.completed: 12, .failed: 2, .queued: 26], downloads: [.inProgress: 1])
        let object = try #require(try jsonObject(JSONOutput.encode(StatusJSON(summary: summary, agentPID: nil))) as? [String: Any])
        #expect(Set(object.keys) == ["total", "queued", "in_progress", "retrying", "completed", "failed", "need_attention",
                                      "paused_reason", "agent_running", "agent_pid", "directions", "batch", "watch_troubles", "watch_waiting",
                                      "taken_as_it_was", "taken_as_it_was_count"])
        #expect((object["taken_as_it_was"] as? [Any])?.isEmpty == true && object["taken_as_it_was_count"] as? Int == 0)
        #expect(object["total"] as? Int == 41)
        #expect(object["need_attention"] as? Int == 2)
        #expect(object["in_progress"] as? Int == 1)
        #expect(object["paused_reason"] is NSNull)
        #expect(object["agent_running"] as? Bool == false)
        #expect(object["agent_pid"] is NSNull)
        let directions = try #require(object["directions"] as? [String: [String: Int]])
        #expect(directions["upload"]?["completed"] == 12)
        #expect(directions["upload"]?["total"] == 40)
        #expect(directions["download"]?["in_progress"] == 1)
        #expect(directions["download"]?["failed"] == 0)
        #expect((object["watch_troubles"] as? [Any])?.isEmpty == true)
    }

    @Test("status --json lists what keeps watch rules from their job")
    func watchTroubles() throws {
        let trouble = StatusJSON.WatchTrouble(rule: "camera", code: "folder_missing", message: "the folder /media/card is not there",
                                              action: "watching resumes by itself when it is back")
        let summary = makeSummary()
        let object = try #require(try jsonObject(JSONOutput.encode(StatusJSON(summary: summary, agentPID: 4242, watchTroubles: [trouble])))
                                  as? [String: Any])
        let troubles = try #require(object["watch_troubles"] as? [[String: String]])
        #expect(troubles == [["rule": "camera", "code": "folder_missing", "message": "the folder /media/card is not there",
                              "action": "watching resumes by itself when it is back"]])
    }

    @Test("status --json gives the batch: files and bytes done of total, the rate and the seconds left")
    func batch() throws {
        let figures = makeBatch(uploading: 3, waiting: 264, files: (30, 300), bytes: (120_000_000, 193_000_000), rate: 14_000_000)
        let object = try #require(try jsonObject(JSONOutput.encode(StatusJSON(summary: makeSummary(uploads: [.queued: 264]),
                                                                              batch: figures, agentPID: 4242))) as? [String: Any])
        #expect(object["agent_pid"] as? Int == 4242)
        #expect(object["agent_running"] as? Bool == true)
        let batch = try #require(object["batch"] as? [String: Any])
        #expect(Set(batch.keys) == ["files_done", "files_total", "bytes_done", "bytes_total", "rate_bytes_per_s", "eta_seconds"])
        #expect(batch["files_done"] as? Int == 30)
        #expect(batch["files_total"] as? Int == 300)
        #expect(batch["bytes_done"] as? Int == 120_000_000)
        #expect(batch["bytes_total"] as? Int == 193_000_000)
        #expect(batch["rate_bytes_per_s"] as? Double == 14_000_000)
        #expect(batch["eta_seconds"] as? Int == 6)  // 73 MB at 14 MB/s, rounded up

        let unknown = try #require(try jsonObject(JSONOutput.encode(StatusJSON(summary: makeSummary(), batch: makeBatch(waiting: 2, files: (0, 2)),
                                                                               agentPID: nil))) as? [String: Any])
        let noRate = try #require(unknown["batch"] as? [String: Any])
        #expect(noRate["rate_bytes_per_s"] is NSNull)
        #expect(noRate["eta_seconds"] is NSNull)
    }

    @Test("a paused queue reports its reason")
    func pausedStatus() throws {
        let summary = makeSummary(paused: "offline")
        let object = try #require(try jsonObject(JSONOutput.encode(StatusJSON(summary: summary, agentPID: 1))) as? [String: Any])
        #expect(object["paused_reason"] as? String == "offline")
        #expect(object["agent_running"] as? Bool == true)
    }

    static let itemKeys: Set<String> = [
        "id", "direction", "origin", "state", "name", "source", "target", "account", "local_path", "remote_path",
        "bytes_done", "bytes_total", "checkpoint_offset", "attempts", "reason", "next_attempt_at", "created_at",
        "started_at", "completed_at", "upload_expires_at", "sha256", "upload_host", "cancel_requested", "watch_rule", "counters",
        "note", "paused", "new_version_of", "conflicted_copy",
    ]

    @Test("an upload item has every key, times in ISO 8601 UTC, nulls for what does not apply")
    func uploadItem() throws {
        let row = makeTransfer(id: 7, state: .retrying, reason: Reason(.connectionReset), attempts: 2,
                               nextAttemptAt: fixedNow + 12_000, bytesDone: 10, bytesTotal: 20,
                               uploadURL: "https://u:p@cloud.example.org/files/x?t=1",
                               counters: ResumeCounters(resumedAt: 4, bytesRead: 6, bytesHashed: 6), createdAt: fixedNow)
        let object = try #require(try jsonObject(JSONOutput.encode(TransferJSON(row))) as? [String: Any])
        #expect(Set(object.keys) == Self.itemKeys)
        #expect(object["id"] as? Int == 7)
        #expect(object["direction"] as? String == "upload")
        #expect(object["state"] as? String == "retrying")
        #expect(object["name"] as? String == "IMG_7.jpg")
        #expect(object["source"] as? String == "/home/alice/Pictures/IMG_7.jpg")
        #expect(object["target"] as? String == "/Photos/IMG_7.jpg")
        #expect(object["account"] as? String == "alice")
        #expect(object["created_at"] as? String == "2026-11-29T14:03:07.250Z")
        #expect(object["next_attempt_at"] as? String == "2026-11-29T14:03:19.250Z")
        #expect(object["completed_at"] is NSNull)
        #expect(object["sha256"] is NSNull)
        #expect(object["upload_host"] as? String == "cloud.example.org")
        let reason = try #require(object["reason"] as? [String: Any])
        #expect(reason["code"] as? String == "connection_reset")
        #expect(reason["message"] as? String == "the connection dropped")
        #expect(reason["action"] as? String == "nothing: it is retried by itself")
        #expect(reason["detail"] is NSNull)
        #expect(object["note"] is NSNull)
        #expect(object["paused"] as? Bool == false)
        #expect(object["counters"] as? [String: Int] == ["resumed_at": 4, "bytes_read": 6, "bytes_hashed": 6])
    }

    @Test("a paused item says so: paused true, and the reason paused with the command that resumes it")
    func pausedItem() throws {
        var row = makeTransfer(id: 12, state: .queued, reason: Reason(.paused), bytesDone: 10, bytesTotal: 20)
        row.paused = true
        let object = try #require(try jsonObject(JSONOutput.encode(TransferJSON(row))) as? [String: Any])
        #expect(object["paused"] as? Bool == true)
        let reason = try #require(object["reason"] as? [String: Any])
        #expect(reason["code"] as? String == "paused")
        #expect(reason["message"] as? String == "paused by you")
        #expect(reason["action"] as? String == "`instant-upload resume 12` lets it go on from where it stopped")
    }

    @Test("a download item swaps source and target and gives the local path; no reason is null")
    func downloadItem() throws {
        let row = makeTransfer(id: 8, .download, state: .completed, local: LocalPath("/home/a/Downloads/Local Drive/r (1).pdf"),
                               remote: "/Docs/r.pdf", sha256: "abc", completedAt: fixedNow)
        let object = try #require(try jsonObject(JSONOutput.encode(TransferJSON(row))) as? [String: Any])
        #expect(object["source"] as? String == "/Docs/r.pdf")
        #expect(object["target"] as? String == "/home/a/Downloads/Local Drive/r (1).pdf")
        #expect(object["local_path"] as? String == "/home/a/Downloads/Local Drive/r (1).pdf")
        #expect(object["name"] as? String == "r.pdf")
        #expect(object["reason"] is NSNull)
        #expect(object["sha256"] as? String == "abc")
        #expect(object["completed_at"] as? String == "2026-11-29T14:03:07.250Z")
    }

    @Test("names that are not UTF-8 become U+FFFD in JSON; control characters are JSON-escaped")
    func badBytes() throws {
        let row = makeTransfer(id: 9, local: LocalPath(bytes: Array("/p/a\n".utf8) + [0xff] + Array(".jpg".utf8)))
        let text = JSONOutput.encode(TransferJSON(row))
        #expect(!text.contains("\n\u{FFFD}"))
        let object = try #require(try jsonObject(text) as? [String: Any])
        #expect(object["name"] as? String == "a\n\u{FFFD}.jpg")
        #expect(object["source"] as? String == "/p/a\n\u{FFFD}.jpg")
    }

    @Test("output is stable: sorted keys, no escaped slashes, decodes back to the same value")
    func stable() throws {
        let items = [makeTransfer(id: 1, state: .failed, reason: Reason(.auth)), makeTransfer(id: 2, .download, remote: "/x/y")]
            .map(TransferJSON.init)
        let text = JSONOutput.encode(items)
        #expect(text == JSONOutput.encode(items))
        #expect(text.contains("\"/Photos/IMG_1.jpg\""))
        #expect(try JSONDecoder().decode([TransferJSON].self, from: Data(text.utf8)) == items)
        let line = JSONOutput.line(items[0])
        #expect(!line.contains("\n"))
        let keys = line.split(separator: ",").compactMap { part -> String? in
            // top-level keys only: skip the nested reason and counters objects
            let trimmed = part.drop { $0 == "{" }
            guard trimmed.hasPrefix("\"") else { return nil }
            return String(trimmed.dropFirst().prefix { $0 != "\"" })
        }
        let topLevel = keys.filter { Self.itemKeys.contains($0) }
        #expect(topLevel == topLevel.sorted())
        #expect(items[0].reason?.action.contains("retry 1") == true)
    }

    @Test("a list written an item at a time is byte for byte the list encoded whole, empty or not; a line break in a name stays escaped")
    func listByItems() {
        let rows = [makeTransfer(id: 1, state: .failed, reason: Reason(.auth)), makeTransfer(id: 2, .download, remote: "/x/y"),
                    makeTransfer(id: 3, local: LocalPath("/p/two\nlines.jpg")), Self.everyField()]
        for count in 0...rows.count {
            let items = rows.prefix(count).map(TransferJSON.init)
            var text = JSONOutput.ArrayText()
            for item in items { text.add(item) }
            #expect(text.finish() == JSONOutput.encode(items))
        }
    }

    /// A row with every field of the JSON set, its text holding every byte that needs an
    /// escape (and some that do not), and bytes that are not UTF-8.
    static func everyField() -> Transfer {
        let awkward = String(decoding: (0...0x7F).map { UInt8($0) }, as: UTF8.self) + "\u{2028}\u{2029}\u{85}é😀/\\\""
        var row = makeTransfer(id: 4, state: .retrying, local: LocalPath(bytes: Array("/p/\(awkward)".utf8) + [0xff, 0xc3] + Array(".jpg".utf8)),
                               remote: "/r/\(awkward).jpg", account: "al\"ice\t",
                               reason: Reason(.serverError, "the server said \(awkward)", action: "`instant-upload retry ID`", detail: awkward),
                               attempts: 3, nextAttemptAt: fixedNow + 5_000, bytesDone: 12, bytesTotal: Int64.max, sha256: "ab",
                               checkpointOffset: 7, counters: ResumeCounters(resumedAt: 1, bytesRead: 2, bytesHashed: -3),
                               startedAt: fixedNow - 1, completedAt: fixedNow)
        row.uploadExpiresAt = fixedNow + 86_400_000
        row.uploadURL = "https://files.example.org/tus/abc"
        row.cancelRequested = true
        row.paused = true
        row.watchRule = "cam\(awkward)"
        row.newVersionOf = "/r/other.jpg"
        row.takenNote = "taken as it was \(awkward)"
        return row
    }

    @Test("a row with every field set, and every byte that needs escaping, is written by hand as JSONEncoder writes it")
    func everyFieldByHand() throws {
        let item = TransferJSON(Self.everyField())
        #expect(item.reason?.detail != nil && item.uploadHost != nil && item.note != nil && item.conflictedCopy)
        var text = JSONOutput.ArrayText()
        text.add(item)
        let written = text.finish()
        #expect(written == JSONOutput.encode([item]))
        #expect(try JSONDecoder().decode([TransferJSON].self, from: Data(written.utf8)) == [item])
    }

    @Test("a long array handed on as it is written (queue --json to standard output) is the whole array, byte for byte")
    func listHandedOn() throws {
        let items = (1...300).map { TransferJSON(makeTransfer(id: Int64($0), local: LocalPath("/p/photo \($0).jpg"))) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("iu-json-\(getpid()).txt").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        defer { unlink(path) }
        let eager = EagerOutput(fd: fd)
        var text = JSONOutput.ArrayText()
        for item in items {
            text.add(item)
            text.handOn(to: eager)
        }
        let handedOn = try String(contentsOfFile: path, encoding: .utf8)
        let rest = text.finish()
        eager.finish()
        close(fd)
        #expect(!handedOn.isEmpty && rest.utf8.count < EagerOutput.gathered, "handed on while written: \(handedOn.utf8.count) bytes, \(rest.utf8.count) left")
        #expect(handedOn + rest == JSONOutput.encode(items))
    }
}
