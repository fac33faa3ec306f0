import Foundation
import Glibc
import Testing
import TestSupport

/// Watched folders that come, go, move and are watched twice.
extension InstantUploadTests {
    @Test("a rule added for a card that is not inserted: when the card comes, the photos on it are sent")
    func cardInserted() throws {
        let scene = try InstantUploadScene()
        try scene.session.startAgent()
        let added = try scene.addRule("media/CARD/DCIM", ["--name", "card"])
        #expect(added.stdout.contains("everything it holds then is uploaded"), "\(added.stdout)")
        try scene.until("rule card waiting for its folder") { try scene.rule("card")["state"] as? String == "folder_missing" }
        // The card, with photos already on it, inserted whole.
        for i in 0..<3 { try Camera.write(scene.path("card-reader/DCIM/IMG_\(i).jpg"), Camera.photo(i)) }
        try Camera.makeFolder(scene.path("media"))
        try Camera.move(scene.path("card-reader"), scene.path("media/CARD"))
        try scene.waitUploaded(3)
        try scene.expectEachOnce(["IMG_0.jpg", "IMG_1.jpg", "IMG_2.jpg"]) { scene.path("media/CARD/DCIM/" + $0) }
        #expect(try scene.rule("card")["baseline"] as? Int == 0)
    }

    @Test("a watched folder moved away with the folder above it, and back: it is waited for, and what arrived meanwhile is sent")
    func movedAwayWithItsParent() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("media/CARD/DCIM"))
        try Camera.makeFolder(scene.path("staging"))
        try scene.session.startAgent()
        try scene.addRule("media/CARD/DCIM", ["--name", "card"])
        try scene.waitWatching("card")
        try Camera.write(scene.path("media/CARD/DCIM/IMG_1.jpg"), Camera.photo(1))
        try scene.waitUploaded(1)

        try Camera.move(scene.path("media/CARD"), scene.path("staging/CARD"))
        try scene.until("rule card waiting for its folder") { try scene.rule("card")["state"] as? String == "folder_missing" }
        try Camera.write(scene.path("staging/CARD/DCIM/IMG_2.jpg"), Camera.photo(2))
        try Camera.move(scene.path("staging/CARD"), scene.path("media/CARD"))
        try scene.waitUploaded(2)
        try scene.expectEachOnce(["IMG_1.jpg", "IMG_2.jpg"]) { scene.path("media/CARD/DCIM/" + $0) }
        try scene.waitWatching("card")
    }

    @Test("a second rule in the config for a watched folder (through a symbolic link) is trouble on that rule, and each photo goes once")
    func configRuleForAWatchedFolder() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera"))
        #expect(symlink(scene.path("Camera"), scene.path("CamLink")) == 0)
        let configPath = scene.session.home.path + "/config/instant-upload/config.ini"
        let config = try String(contentsOfFile: configPath, encoding: .utf8)
        try scene.session.writeConfig(config + """

            [watch "camera"]
            folder = "\(scene.path("Camera"))"
            to = /Photos
            settle_seconds = 1

            [watch "again"]
            folder = "\(scene.path("CamLink"))"
            to = /Photos
            settle_seconds = 1

            """)
        try scene.session.startAgent()
        try scene.waitWatching("camera")
        try scene.until("rule again refused") {
            let rule = try scene.rule("again")
            return rule["state"] as? String == "not_watching"
                && (rule["troubles"] as? [[String: Any]])?.contains { $0["code"] as? String == "folder_watched_twice" } == true
        }
        let list = try scene.session.cli(["watch", "list"])
        #expect(list.status == 1 && list.stdout.contains("the rule camera watches"), "\(list.stdout)")
        try Camera.write(scene.path("Camera/IMG_1.jpg"), Camera.photo(1))
        try scene.waitUploaded(1)
        try scene.expectEachOnce(["IMG_1.jpg"]) { scene.path("Camera/" + $0) }
    }

    @Test("a folder renamed while a photo in it uploads: the upload completes, once, and its row names the photo where it is now")
    func folderRenamedDuringUpload() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera/Trip"))
        try scene.session.startAgent()
        try scene.addRule("Camera")
        try scene.waitWatching("camera")
        // The server stops reading part way through the photo, until the faults are cleared.
        try scene.server.fault(["method": "PATCH", "stall_seconds": 120, "after_bytes": 50_000])
        let photo = Camera.photo(1) + TestData.bytes(count: 400_000, seed: 5)
        try Camera.write(scene.path("Camera/Trip/IMG_1.jpg"), photo)
        try scene.until("the upload under way") {
            ((try scene.server.stats()["current_patches"] as? [String: Int])?["alice"] ?? 0) == 1
        }
        try Camera.move(scene.path("Camera/Trip"), scene.path("Camera/Trip 2024"))
        try scene.session.waitFor("the row following the rename") { items in
            items.first?["local_path"] as? String == scene.path("Camera/Trip 2024/IMG_1.jpg")
        }
        try scene.server.clearFaults()
        try scene.session.waitFor("the upload ended", timeout: 120) { items in
            ["completed", "failed"].contains(items.first?["state"] as? String ?? "")
        }
        let item = try #require(try scene.session.items().first)
        #expect(item["state"] as? String == "completed", "a rename fails no upload: \(item["reason"] ?? "")")
        #expect(item["local_path"] as? String == scene.path("Camera/Trip 2024/IMG_1.jpg"))
        try scene.expectEachOnce(["IMG_1.jpg"]) { _ in scene.path("Camera/Trip 2024/IMG_1.jpg") }
    }

    @Test("--after-upload trash keeps the original when the server's check after the upload fails, and watch list says why")
    func trashNeedsTheServersWord() throws {
        // A plain WebDAV server: one PUT sends the file, and no question about the target
        // comes between it and the look at the file it made.
        let scene = try InstantUploadScene(face: .webdav)
        try Camera.makeFolder(scene.path("Camera"))
        try scene.session.startAgent()
        try scene.addRule("Camera", ["--after-upload", "trash"])
        try scene.waitWatching("camera")
        // Held part way, so the server's answers can be broken after the upload's own questions.
        try scene.server.fault(["method": "PUT", "stall_seconds": 3, "after_bytes": 1_000])
        let photo = Camera.photo(1) + TestData.bytes(count: 50_000, seed: 9)
        try Camera.write(scene.path("Camera/IMG_1.jpg"), photo)
        try scene.until("the upload under way") {
            ((try scene.server.stats()["requests"] as? [String: Int])?["PUT"] ?? 0) == 1
        }
        try scene.server.fault(["method": "PROPFIND", "path_prefix": "/dav/", "status": 500, "count": 1_000])
        try scene.waitUploaded(1)
        try scene.until("the original kept") { try scene.rule("camera")["kept_count"] as? Int == 1 }
        #expect(FileManager.default.contents(atPath: scene.path("Camera/IMG_1.jpg")) == Data(photo), "the original stays")
        let trash = scene.session.home.path + "/.local/share/Trash/files"
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: trash)) ?? []).isEmpty)
        let kept = try #require((try scene.rule("camera")["kept"] as? [[String: Any]])?.first)
        #expect(kept["path"] as? String == scene.path("Camera/IMG_1.jpg"))
        #expect((kept["reason"] as? String ?? "").contains("the server did not show the uploaded file"), "\(kept)")
        let list = try scene.session.cli(["watch", "list"])
        #expect(list.stdout.contains("kept, not moved to the trash: 1 original") && list.stdout.contains("IMG_1.jpg: the server did not show"),
                "\(list.stdout)")
    }
}
