import Dispatch
import Foundation
import Glibc
import Testing
import TestSupport

/// The real agent with real rules against the reference server, one test at a time, each
/// on a thread of its own; the ones that change inotify limits are `WholeMachineTests`.
/// The burst of 2,000 files is a suite of its own so that it runs beside these.
@Suite("Instant upload end to end", .serialized, .ownThread)
struct InstantUploadTests {}

@Suite("Instant upload of a burst", .serialized, .ownThread)
struct InstantUploadBurstTests {
    @Test("2,000 files copied in at once, 200 moved in and one written over ten seconds: each uploaded exactly once, the slow one only when whole")
    func burst() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera"))
        try scene.session.startAgent()
        try scene.addRule("Camera", settle: 2)
        try scene.waitWatching("camera")

        var names: [String] = []
        for i in 0..<2000 {
            try Camera.write(scene.path("staging/IMG_\(i).jpg"), Camera.photo(i))
            names.append("IMG_\(i).jpg")
        }
        for i in 0..<200 {
            try Camera.write(scene.path("elsewhere/DSC_\(i).jpg"), Camera.photo(10_000 + i))
            names.append("DSC_\(i).jpg")
        }
        // A recording: opened, written and closed again every 0.4 s for ten seconds.
        let video = MediaFiles.movie(creation: 1_700_000_000, mediaBytes: 250_000)
        let slow = scene.path("Camera/VID_0001.mp4")
        let written = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var writerError: Error?
        nonisolated(unsafe) var finishedWriting = Date.distantFuture
        DispatchQueue.global().async {
            defer { written.signal() }
            do {
                let pieces = 25
                let size = (video.count + pieces - 1) / pieces
                for piece in 0..<pieces {
                    try Camera.append(slow, Array(video[(piece * size)..<min(video.count, (piece + 1) * size)]))
                    usleep(400_000)
                }
                finishedWriting = Date()
            } catch {
                writerError = error
            }
        }
        let copy = try Shell.capture("/bin/cp", ["-r", scene.path("staging") + "/.", scene.path("Camera") + "/"])
        #expect(copy.status == 0, "\(copy.stderr)")
        for i in 0..<200 { try Camera.move(scene.path("elsewhere/DSC_\(i).jpg"), scene.path("Camera/DSC_\(i).jpg")) }
        written.wait()
        if let writerError { throw writerError }
        names.append("VID_0001.mp4")

        try scene.waitUploaded(2201, timeout: 600)
        try scene.expectEachOnce(names) { scene.path("Camera/" + $0) }
        let item = try #require(try scene.itemsByTarget()["/Photos/VID_0001.mp4"]?.first)
        #expect(item["bytes_total"] as? Int == video.count)
        let queuedAt = try #require(InstantUploadTests.date(item["created_at"]))
        #expect(queuedAt >= finishedWriting, "the recording was queued before it was whole")
        let rule = try scene.rule("camera")
        #expect(rule["taken"] as? Int == 2201)
    }
}

extension InstantUploadTests {
    @Test("the agent restarted between batches with its database kept: renamed, copied and old files are not sent again")
    func restarts() throws {
        let scene = try InstantUploadScene.watchingCamera()
        var names: [String] = []
        func batch(_ range: Range<Int>) throws {
            for i in range {
                try Camera.write(scene.path("Camera/IMG_\(i).jpg"), Camera.photo(i))
                names.append("IMG_\(i).jpg")
            }
        }
        try batch(0..<30)
        try scene.waitUploaded(30)

        scene.session.stopAgent()
        try batch(30..<60)
        // While nobody watches: one renamed into a new folder, one copied under a new name.
        try Camera.makeFolder(scene.path("Camera/2024"))
        try Camera.move(scene.path("Camera/IMG_0.jpg"), scene.path("Camera/2024/renamed.jpg"))
        try Camera.write(scene.path("Camera/copy of IMG_1.jpg"), Camera.photo(1))
        try scene.session.startAgent()
        try scene.waitUploaded(60)

        scene.session.stopAgent()
        try scene.session.startAgent()
        try batch(60..<90)
        try scene.waitUploaded(90)
        try scene.expectEachOnce(names) { name in
            name == "IMG_0.jpg" ? scene.path("Camera/2024/renamed.jpg") : scene.path("Camera/" + name)
        }
        // 90 uploads and the copy, recognised by its content.
        #expect(try scene.rule("camera")["taken"] as? Int == 91)
    }

    @Test("run --until-idle, with photos that arrived while no agent ran, a recording still being written and a photo a program holds open: exits once all of them are uploaded, not before, and says what it waits for")
    func untilIdleTakesWhatArrived() throws {
        let scene = try InstantUploadScene.watchingCamera()
        scene.session.stopAgent()
        var names: [String] = []
        for i in 0..<3 {
            try Camera.write(scene.path("Camera/IMG_\(i).jpg"), Camera.photo(i))
            names.append("IMG_\(i).jpg")
        }
        // A recording written in pieces every 0.4 s from before the agent starts (the rule
        // settles in 1 s), the last about 4 s later.
        let video = MediaFiles.movie(creation: 1_700_000_000, mediaBytes: 100_000)
        let pieces = 10, size = (video.count + 9) / 10
        try Camera.append(scene.path("Camera/VID_0001.mp4"), Array(video[0..<size]))
        names.append("VID_0001.mp4")
        // A photo written whole, and held open for writing until 9 s after the recording's end.
        let held = scene.path("Camera/IMG_held.jpg")
        try Camera.write(held, Camera.photo(9))
        let holder = open(held, O_WRONLY | O_APPEND | O_CLOEXEC)
        #expect(holder >= 0)
        names.append("IMG_held.jpg")
        let written = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var writerError: Error?
        DispatchQueue.global().async {
            defer { written.signal() }
            do {
                for piece in 1..<pieces {
                    usleep(400_000)
                    try Camera.append(scene.path("Camera/VID_0001.mp4"), Array(video[(piece * size)..<min(video.count, (piece + 1) * size)]))
                }
            } catch {
                writerError = error
            }
            usleep(9_000_000)
            close(holder)
        }
        try scene.session.startAgent(arguments: ["--until-idle"])
        let status = scene.session.waitForAgentExit(seconds: 90)
        written.wait()
        if let writerError { throw writerError }
        let log = scene.session.agentLog
        #expect(status == 0, "\(log.suffix(3000))")
        try scene.expectEachOnce(names) { scene.path("Camera/" + $0) }
        let summary = try scene.status()
        #expect(summary["completed"] as? Int == 5 && summary["total"] as? Int == 5, "\(summary)")
        #expect(log.contains("before exiting, waiting for what is still arriving: 1 file settling in \(scene.path("Camera"))"
                             + " (still written, copied or held open); held back: IMG_held.jpg: a program still has it open for writing"),
                "\(log.suffix(3000))")
    }

    @Test("run --until-idle while the watch service has not read its rules yet: it does not exit meanwhile, and sends the photo that arrived while no agent ran once they are read")
    func untilIdleWaitsForTheRules() throws {
        let scene = try InstantUploadScene.watchingCamera()
        scene.session.stopAgent()
        try Camera.write(scene.path("Camera/IMG_1.jpg"), Camera.photo(1))
        scene.session.pause(at: "rules-unread")
        defer { scene.session.releasePause() }
        try scene.session.startAgent(arguments: ["--until-idle"])
        try scene.session.waitForAgentLog("paused at rules-unread")
        // Many of the scheduler's passes long: an agent that went by the queue alone would
        // have exited by now.
        sleep(2)
        #expect(scene.session.agentIsRunning, "exited before the rules were read: \(scene.session.agentLog.suffix(2000))")
        scene.session.releasePause()
        let status = scene.session.waitForAgentExit(seconds: 60)
        #expect(status == 0, "\(scene.session.agentLog.suffix(3000))")
        try scene.expectEachOnce(["IMG_1.jpg"]) { scene.path("Camera/" + $0) }
    }

    static func date(_ value: Any?) -> Date? {
        guard let text = value as? String else { return nil }
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return format.date(from: text)
    }
}

extension Camera {
    static func makeFolder(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Opens `path` (creating it), appends `bytes` and closes it: one `IN_CLOSE_WRITE`.
    static func append(_ path: String, _ bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TestFailure("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else { throw TestFailure("cannot write \(path)") }
    }
}
