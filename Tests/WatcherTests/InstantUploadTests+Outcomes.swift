import Foundation
import Glibc
import Testing
import TestSupport

extension InstantUploadTests {
    @Test("watch list and watch list --json show how many files a rule took and the last one, by name and time, once they went")
    func listShowsWhatWasTaken() throws {
        let scene = try InstantUploadScene.watchingCamera()
        let started = Date()
        try Camera.write(scene.path("Camera/IMG_1.jpg"), Camera.photo(1))
        try scene.waitUploaded(1)
        // One after the other, so which came last is not a matter of timing.
        try Camera.write(scene.path("Camera/at the sea.jpg"), Camera.photo(2))
        try scene.waitUploaded(2)

        let rule = try scene.rule("camera")
        #expect(rule["taken"] as? Int == 2, "\(rule)")
        #expect(rule["last_taken"] as? String == scene.path("Camera/at the sea.jpg"), "\(rule)")
        let at = try #require(Self.date(rule["last_taken_at"]), "last_taken_at is not an ISO 8601 moment: \(rule["last_taken_at"] ?? "nil")")
        #expect(at >= started.addingTimeInterval(-2) && at <= Date().addingTimeInterval(2), "last taken at \(at), the test ran from \(started)")

        let text = try scene.session.cli(["watch", "list"])
        #expect(text.status == 0, "\(text.stdout)\(text.stderr)")
        #expect(text.stdout.contains("2 taken, last at the sea.jpg ("), "\(text.stdout)")
    }

    @Test("a photo of an import that stalls with its file open: watch list and status show it as held back, with why and until when, and exit 0; closed, it goes and is shown no more")
    func stalledImportShown() throws {
        let scene = try InstantUploadScene.watchingCamera()
        let path = scene.path("Camera/IMG_0042.jpg")
        try Camera.write(path, Camera.photo(42))
        let holder = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        #expect(holder >= 0)
        var closed = false
        defer { if !closed { close(holder) } }
        try scene.until("the photo shown as held back") { try scene.rule("camera")["waiting_count"] as? Int == 1 }

        let rule = try scene.rule("camera")
        let waiting = try #require(rule["waiting"] as? [[String: Any]], "\(rule)")
        #expect(waiting.first?["code"] as? String == "open_for_writing" && waiting.first?["path"] as? String == path, "\(waiting)")
        let since = try #require(Self.date(waiting.first?["since"])), until = try #require(Self.date(waiting.first?["until"]))
        #expect(abs(until.timeIntervalSince(since) - 600) < 1, "taken as it is ten minutes after it was first held: \(since) \(until)")
        let list = try scene.session.cli(["watch", "list"])
        #expect(list.status == 0 && list.stdout.contains("waiting: \(path) (for ") && list.stdout.contains("a program still has it open for writing")
                && list.stdout.contains("it is taken once it is closed, or as it is at "), "\(list.stdout)")
        let status = try scene.session.cli(["status"])
        #expect(status.status == 0 && status.stdout.contains("watch camera: \(path) waits (for "), "\(status.stdout)")
        let json = try scene.status()
        #expect((json["watch_waiting"] as? [[String: Any]])?.map { $0["rule"] as? String } == ["camera"], "\(json)")
        #expect(try scene.session.items().isEmpty, "nothing queued while it is held")

        close(holder)
        closed = true
        try scene.waitUploaded(1)
        try scene.until("the photo shown no more") { try scene.rule("camera")["waiting_count"] as? Int == 0 }
        #expect(!(try scene.session.cli(["status"]).stdout.contains("waits")))
    }

    @Test("a file already on the server with the same bytes completes as already there: nothing sent, nothing renamed")
    func sameFileAlreadyOnServer() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera"))
        let photo = Camera.photo(1)
        // Uploaded before, by hand or from another device.
        try Data(photo).write(to: URL(fileURLWithPath: scene.server.tree() + "/Photos/IMG_0001.jpg"))
        try scene.session.startAgent()
        try scene.addRule("Camera")
        try scene.waitWatching("camera")
        try Camera.write(scene.path("Camera/IMG_0001.jpg"), photo)
        try scene.waitUploaded(1)

        #expect(scene.serverFiles() == ["IMG_0001.jpg"], "no second copy under another name")
        #expect(try TestData.sha256(ofFile: scene.server.tree() + "/Photos/IMG_0001.jpg") == (try TestData.sha256(photo)))
        let stats = try scene.server.stats()
        let requests = try #require(stats["requests"] as? [String: Any], "the reference server counts requests by method: \(stats)")
            .compactMapValues { $0 as? Int }
        #expect(requests["PROPFIND"] ?? 0 > 0, "the agent looked at the target: \(requests)")
        #expect(requests["POST"] == nil && requests["PATCH"] == nil && requests["PUT"] == nil, "nothing was uploaded: \(requests)")
        #expect(stats["patch_bytes"] as? Int == 0, "\(stats)")
        let completions = try scene.completions()
        #expect(completions.isEmpty, "the server completed an upload: \(completions)")
        #expect(scene.session.agentLog.contains("/Photos/IMG_0001.jpg is already on the server with the same content"),
                "\(scene.session.agentLog.suffix(2000))")
        #expect(try scene.rule("camera")["taken"] as? Int == 1, "the file counts as taken")
        let items = try scene.itemsByTarget()
        let item = try #require(items["/Photos/IMG_0001.jpg"]?.first, "\(items)")
        #expect(item["state"] as? String == "completed")
        #expect(item["sha256"] as? String == (try TestData.sha256(photo)))
    }
}
