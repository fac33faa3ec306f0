import Foundation
import Glibc
import Platform
import Queue
import Testing
import TestSupport

extension InstantUploadTests {
    /// Two rules to the same folder on the server, one with `flag`: a photo in each; waits
    /// until the flagged rule's upload is held with `code` and the other one's has completed.
    func heldBesideFree(_ scene: InstantUploadScene, held: String, flag: String, free: String, code: String) throws {
        try Camera.makeFolder(scene.path(held))
        try Camera.makeFolder(scene.path(free))
        try scene.session.startAgent()
        try scene.addRule(held, [flag])
        try scene.addRule(free)
        try scene.waitWatching(held.lowercased())
        try scene.waitWatching(free.lowercased())
        try Camera.write(scene.path(held + "/held.jpg"), Camera.photo(1))
        try Camera.write(scene.path(free + "/goes.jpg"), Camera.photo(2))
        try scene.session.waitFor("the \(flag) rule's upload held as \(code), the other rule's done") { items in
            let heldRow = items.first { $0["target"] as? String == "/Photos/held.jpg" }
            let goes = items.first { $0["target"] as? String == "/Photos/goes.jpg" }
            return (heldRow?["reason"] as? [String: Any])?["code"] as? String == code && goes?["state"] as? String == "completed"
        }
    }

    @Test("--on-ac-power holds the rule's uploads on battery with the reason shown, and lets them go when plugged in")
    func mainsPower() throws {
        let sys = try TemporaryFolder.sysfsOnBattery()
        let scene = try InstantUploadScene(config: "\n[network]\nsysfs_root = \(sys.path)\n")
        try heldBesideFree(scene, held: "Camera", flag: "--on-ac-power", free: "Other", code: "battery")
        let held = try #require(try scene.session.items().first { $0["target"] as? String == "/Photos/held.jpg" })
        let message = (held["reason"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("BAT0") && message.contains("54 %"), "\(message)")
        let listed = try scene.rule("camera")
        let holds = listed["held"] as? [[String: Any]] ?? []
        #expect(holds.first?["code"] as? String == "battery" && holds.first?["count"] as? Int == 1)
        let status = try scene.session.cli(["status"])
        #expect(status.stdout.contains("1 waiting for mains power"), "\(status.stdout)")

        try sys.file("class/power_supply/AC/online", bytes: Array("1\n".utf8))
        try scene.waitUploaded(2)
        #expect(scene.serverFiles() == ["goes.jpg", "held.jpg"])
    }

    @Test("photos a shut gate holds are marked once: the scheduler reads only rows ready to go, and the photos say why again after the queue's pause")
    func heldPhotosAreNotReadPast() throws {
        let sys = try TemporaryFolder.sysfsOnBattery()
        let scene = try InstantUploadScene(config: "\n[network]\nsysfs_root = \(sys.path)\n",
                                           extraEnvironment: ["INSTANT_UPLOAD_EXPLAIN": "1"])
        try heldBesideFree(scene, held: "Camera", flag: "--on-ac-power", free: "Other", code: "battery")
        for i in 0..<20 { try Camera.write(scene.path("Camera/IMG_\(i).jpg"), Camera.photo(10 + i)) }
        try Camera.write(scene.path("Other/after.jpg"), Camera.photo(3))
        try scene.session.waitFor("21 photos held on battery, the other rule's two done") { items in
            items.filter { ($0["reason"] as? [String: Any])?["code"] as? String == "battery" }.count == 21
                && items.filter { $0["state"] as? String == "completed" }.count == 2
        }
        // The held photos are marked with their rule's gate, so they are not in the index of
        // rows ready to start; every plan of the scheduler's query reads the queued rows there.
        let store = try QueueStore(path: scene.session.databasePath)
        let held = try #require(try store.transfers(state: .queued).first)
        #expect(try store.heldScopes() == [.rule(try #require(held.watchRule), account: held.accountID)])
        #expect(try store.runnable(direction: .upload, now: nowMilliseconds(), limit: 100).isEmpty,
                "the held photos are not ready, with no account or rule left out by the caller")
        let log = scene.session.agentLog.split(separator: "\n", omittingEmptySubsequences: false)
        let plans = log.indices.filter { log[$0].hasPrefix("query plan: SELECT * FROM (SELECT t.id AS id") }
        #expect(!plans.isEmpty, "\(scene.session.agentLog.suffix(3000))")
        for start in plans {
            let steps = log[(start + 1)...].prefix { $0.hasPrefix("    ") }
            #expect(steps.contains { $0.contains("USING INDEX transfers_ready") }, "\(steps.joined(separator: "\n"))")
        }

        // The queue's pause writes over their reason, and its end clears it; the gate says it again.
        #expect(try scene.session.cli(["pause", "--all"]).status == 0)
        #expect(try scene.session.cli(["resume", "--all"]).status == 0)
        try scene.session.waitFor("the 21 photos held on battery again") { items in
            items.filter { ($0["reason"] as? [String: Any])?["code"] as? String == "battery" }.count == 21
        }
        try sys.file("class/power_supply/AC/online", bytes: Array("1\n".utf8))
        try scene.waitUploaded(23)
    }

    @Test("--wifi-only belongs to the rule: its uploads wait for unmetered Wi-Fi, another rule's to the same account go")
    func wifiOnlyRule() throws {
        // No interface here is wireless, so a Wi-Fi-only rule always waits.
        let sys = TemporaryFolder("iu-sys")
        try sys.file("class/net/README", bytes: [])
        let scene = try InstantUploadScene(config: "\n[network]\nsysfs_root = \(sys.path)\n")
        try heldBesideFree(scene, held: "Camera", flag: "--wifi-only", free: "Scans", code: "wifi")
        let listed = try scene.rule("camera")
        #expect(listed["wifi_only"] as? Bool == true && listed["wifi_only_from"] as? String == "rule")
        #expect((listed["held"] as? [[String: Any]])?.first?["code"] as? String == "wifi")
        #expect(try scene.rule("scans")["wifi_only"] as? Bool == false)

        // Sent by hand anyway.
        let id = try #require(try scene.session.items().first { $0["target"] as? String == "/Photos/held.jpg" }?["id"] as? Int)
        #expect(try scene.session.cli(["retry", "--now", String(id)]).status == 0)
        try scene.waitUploaded(2)
    }

    @Test("a folder that is not there is waited for, a normal state (watch list and status exit 0); gone while its uploads wait, it is trouble")
    func missingFolder() throws {
        let scene = try InstantUploadScene()
        try scene.session.startAgent()
        let added = try scene.addRule("Card")
        #expect(added.stdout.contains("not there now"))
        try scene.until("rule card waiting for its folder") { try scene.rule("card")["state"] as? String == "folder_missing" }
        #expect((try scene.rule("card")["troubles"] as? [[String: Any]])?.isEmpty == true)
        let status = try scene.session.cli(["status"])
        #expect(status.status == 0, "\(status.stdout)")
        #expect((try scene.status()["watch_troubles"] as? [[String: Any]])?.isEmpty == true)
        let list = try scene.session.cli(["watch", "list"])
        #expect(list.status == 0 && list.stdout.contains("waiting for its folder to appear"), "\(list.stdout)")

        try Camera.makeFolder(scene.path("Card"))
        try scene.waitWatching("card")
        try Camera.write(scene.path("Card/IMG_1.jpg"), Camera.photo(1))
        try scene.waitUploaded(1)

        // Pulled out while a photo of it waits to be sent: that needs the person.
        #expect(try scene.session.cli(["pause", "--all"]).status == 0)
        try Camera.write(scene.path("Card/IMG_2.jpg"), Camera.photo(2))
        try scene.session.waitFor("the second photo queued") { $0.count == 2 }
        try FileManager.default.removeItem(atPath: scene.path("Card"))
        try scene.until("the missing folder in trouble") {
            (try scene.rule("card")["troubles"] as? [[String: Any]])?.first?["code"] as? String == "folder_missing"
        }
        let troubled = try scene.session.cli(["status"])
        #expect(troubled.status == 1)
        #expect(troubled.stdout.contains("watch card: the folder") && troubled.stdout.contains("is not there"), "\(troubled.stdout)")
        let listed = try scene.session.cli(["watch", "list"])
        #expect(listed.status == 1 && listed.stdout.contains("trouble: the folder"), "\(listed.stdout)")
    }

    @Test("photos queued from a card that is taken out wait for it, saying why (and refused by hand), and go once it is back; none fails as gone")
    func cardTakenOutWhileQueued() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Card"))
        try scene.threePhotosQueuedFromCard()

        // The card taken out while they wait; the queue goes on.
        try Camera.move(scene.path("Card"), scene.path("Card.out"))
        #expect(try scene.session.cli(["resume", "--all"]).status == 0)
        let waitingForTheCard = InstantUploadScene.waitsForTheCard
        try scene.session.waitFor("the three photos waiting for the card") { $0.count == 3 && $0.allSatisfy(waitingForTheCard) }
        // None is sent by hand while its card is out (held by the rule, or tried and waiting):
        // the refusal says why.
        let waiting = try scene.session.items().compactMap { $0["id"] as? Int }
        #expect(waiting.count == 3)
        for id in waiting {
            let refused = try scene.session.cli(["retry", "--now", String(id)])
            #expect(refused.status != 0 && refused.stderr.contains("is not there"), "\(refused.stdout) \(refused.stderr)")
        }
        let message = try scene.threeStillWaitingForTheCard()
        #expect(message.contains(scene.path("Card")) && message.contains("is not there"), "\(message)")

        try Camera.move(scene.path("Card.out"), scene.path("Card"))
        try scene.waitUploaded(3)
        try scene.expectEachOnce(["IMG_1.jpg", "IMG_2.jpg", "IMG_3.jpg"]) { scene.path("Card/" + $0) }
    }

    @Test("photos queued from a card on a fixed mount point, which stays behind empty when the card is unmounted (while the agent runs, or while it is stopped), wait for it and go once it is back; none fails as deleted",
          arguments: [false, true])
    func cardUnmountedFromFixedMountPoint(whileStopped: Bool) throws {
        let scene = try InstantUploadScene()
        defer { TestMounts.unmountAll(below: scene.files.path) }
        // The card's own file system (a tmpfs, which keeps its files while it is not on the
        // mount point), mounted on the watched folder as an fstab entry would. It is not in
        // /etc/fstab: only what the agent saw while it watched says a card was there.
        try Camera.makeFolder(scene.path("Card"))
        try Camera.makeFolder(scene.path("store"))
        try TestMounts.mountTmpfs(at: scene.path("store"))
        try TestMounts.bind(scene.path("store"), at: scene.path("Card"))
        try scene.threePhotosQueuedFromCard()

        if whileStopped { scene.session.stopAgent() }
        try TestMounts.unmount(scene.path("Card"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scene.path("Card")).isEmpty)
        #expect(try scene.session.cli(["resume", "--all"]).status == 0)
        // Started again, the agent knows from its first pass that the card is out.
        if whileStopped { try scene.session.startAgent() }
        let waitingForTheCard = InstantUploadScene.waitsForTheCard
        try scene.session.waitFor("the three photos waiting for the card") { $0.count == 3 && $0.allSatisfy(waitingForTheCard) }
        // None is sent by hand while its card is out (held by the rule, or tried and waiting):
        // the refusal says why.
        let waiting = try scene.session.items().compactMap { $0["id"] as? Int }
        #expect(waiting.count == 3)
        for id in waiting {
            let refused = try scene.session.cli(["retry", "--now", String(id)])
            #expect(refused.status != 0 && refused.stderr.contains("not mounted on"), "\(refused.stdout) \(refused.stderr)")
        }
        let message = try scene.threeStillWaitingForTheCard()
        #expect(message.contains("not mounted on " + scene.path("Card")), "\(message)")

        try TestMounts.bind(scene.path("store"), at: scene.path("Card"))
        try scene.waitUploaded(3)
        try scene.expectEachOnce(["IMG_1.jpg", "IMG_2.jpg", "IMG_3.jpg"]) { scene.path("Card/" + $0) }
    }

    @Test("a rule paused while the agent was stopped holds its queued photos from the agent's first pass")
    func pausedWhileStopped() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Card"))
        try scene.threePhotosQueuedFromCard()
        scene.session.stopAgent()
        #expect(try scene.session.cli(["watch", "pause", "card"]).status == 0)
        #expect(try scene.session.cli(["resume", "--all"]).status == 0)
        // The service's thread held before it reads the rules: the scheduler's passes meanwhile
        // go by what the agent read as it started.
        scene.session.pause(at: "rules-unread")
        defer { scene.session.releasePause() }
        try scene.session.startAgent()
        try scene.session.waitForAgentLog("paused at rules-unread")
        try scene.session.waitFor("the three photos held by their paused rule") { items in
            items.count == 3 && items.allSatisfy { ($0["reason"] as? [String: Any])?["code"] as? String == "paused" }
        }
        sleep(2)
        #expect(scene.serverFiles().isEmpty, "a photo of the paused rule went")
        scene.session.releasePause()
        #expect(try scene.session.cli(["watch", "resume", "card"]).status == 0)
        try scene.waitUploaded(3)
    }
}

extension InstantUploadTests {
    @Test("a rule whose account is removed waits for it, says so, and takes what arrived meanwhile once it is back")
    func accountRemoved() throws {
        let scene = try InstantUploadScene.watchingCamera()
        #expect(try scene.session.cli(["account", "remove", "home"]).status == 0)
        try Camera.write(scene.path("Camera/meanwhile.jpg"), Camera.photo(1))
        try scene.until("rule camera waiting for its account") {
            let rule = try scene.rule("camera")
            return rule["state"] as? String == "not_watching"
                && (rule["troubles"] as? [[String: Any]])?.contains { $0["code"] as? String == "account_missing" } == true
        }
        #expect(try scene.session.items().isEmpty)
        #expect(scene.session.agentIsRunning)

        // `account add` rings the agent: the rule starts then, not at its next retry (30 s).
        try scene.session.addAccount(scene.server)
        try scene.waitUploaded(1, timeout: 25)
        #expect(scene.serverFiles() == ["meanwhile.jpg"])
    }
}

extension InstantUploadScene {
    /// The agent running with a rule on `Card` watching it, the queue paused, and three
    /// photos written to the card and queued.
    func threePhotosQueuedFromCard() throws {
        try session.startAgent()
        try addRule("Card")
        try waitWatching("card")
        #expect(try session.cli(["pause", "--all"]).status == 0)
        for i in 1...3 { try Camera.write(path("Card/IMG_\(i).jpg"), Camera.photo(i)) }
        try session.waitFor("the three photos queued") { $0.count == 3 }
    }

    static func waitsForTheCard(_ item: [String: Any]) -> Bool {
        (item["reason"] as? [String: Any])?["code"] as? String == "folder_missing"
    }

    /// A while later, the three photos still wait for the card, none failed: the reason's message.
    func threeStillWaitingForTheCard() throws -> String {
        sleep(3)
        let waiting = try session.items()
        #expect(waiting.count == 3 && waiting.allSatisfy { $0["state"] as? String != "failed" && Self.waitsForTheCard($0) },
                "\(waiting.map { "\($0["state"] ?? "?"): \($0["reason"] ?? "-")" })")
        return (waiting.first?["reason"] as? [String: Any])?["message"] as? String ?? ""
    }
}
