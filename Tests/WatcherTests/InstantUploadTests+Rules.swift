import Foundation
import Glibc
import Testing
import TestSupport

extension InstantUploadTests {
    @Test("--pictures leaves videos alone and --videos leaves pictures alone")
    func mediaKinds() throws {
        let scene = try InstantUploadScene(serverFolders: ["Photos/Pictures", "Photos/Videos"])
        try Camera.makeFolder(scene.path("Pics"))
        try Camera.makeFolder(scene.path("Vids"))
        try scene.session.startAgent()
        try scene.addRule("Pics", to: "/Photos/Pictures", ["--pictures"])
        try scene.addRule("Vids", to: "/Photos/Videos", ["--videos"])
        try scene.waitWatching("pics")
        try scene.waitWatching("vids")
        // What each must leave alone goes first, so it is decided before the rest arrives.
        try Camera.write(scene.path("Pics/clip.mp4"), MediaFiles.movie(creation: 1_700_000_000))
        try Camera.write(scene.path("Vids/photo.jpg"), Camera.photo(1))
        try Camera.write(scene.path("Vids/shot.png"), MediaFiles.png)
        sleep(2)
        try Camera.write(scene.path("Pics/photo.jpg"), Camera.photo(2))
        try Camera.write(scene.path("Pics/shot.png"), MediaFiles.png)
        try Camera.write(scene.path("Vids/clip.mov"), MediaFiles.movie(creation: 1_700_000_100, quickTime: true))
        try scene.waitUploaded(3)
        #expect(scene.serverFiles("Photos/Pictures") == ["photo.jpg", "shot.png"])
        #expect(scene.serverFiles("Photos/Videos") == ["clip.mov"])
    }

    @Test("--subfolders month files each picture under the month it was taken, made on the server as needed")
    func monthFolders() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera"))
        try scene.session.startAgent()
        try scene.addRule("Camera", ["--subfolders", "month"])
        try scene.waitWatching("camera")
        try Camera.write(scene.path("Camera/summer.jpg"), MediaFiles.photo("2023:07:14 09:30:00", offset: "+02:00"))
        try Camera.write(scene.path("Camera/winter.jpg"), MediaFiles.photo("2022:01:02 23:59:59"))
        try Camera.write(scene.path("Camera/same month.jpg"), MediaFiles.photo("2023:07:01 00:00:00", comment: "other"))
        // Mid-month, so the agent's time zone cannot move it.
        try Camera.write(scene.path("Camera/clip.mp4"), MediaFiles.movie(creation: 1_584_270_000))  // 2020-03-15
        try scene.waitUploaded(4)
        #expect(scene.serverFiles() == ["2020/03/clip.mp4", "2022/01/winter.jpg", "2023/07/same month.jpg", "2023/07/summer.jpg"])
    }

    @Test("an HEIC goes under the month of its Exif item; a JPEG with a damaged EXIF date goes under its modification time's month, and the log says why")
    func heicAndDamagedExif() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera"))
        try scene.session.startAgent()
        try scene.addRule("Camera", ["--subfolders", "month"])
        try scene.waitWatching("camera")
        // Made beside the folder with an old mtime (mid-month, so no time zone moves it), then moved in.
        try Camera.write(scene.path("staging/damaged.jpg"), MediaFiles.photo("garbage garbage garb"))
        var times = [timespec(tv_sec: 1_621_080_000, tv_nsec: 0), timespec(tv_sec: 1_621_080_000, tv_nsec: 0)]  // 2021-05-15
        #expect(utimensat(AT_FDCWD, scene.path("staging/damaged.jpg"), &times, 0) == 0)
        try Camera.move(scene.path("staging/damaged.jpg"), scene.path("Camera/damaged.jpg"))
        try Camera.write(scene.path("Camera/phone.heic"), MediaFiles.heic(exif: MediaFiles.exif(dateTimeOriginal: "2019:11:20 08:00:00")))
        try scene.waitUploaded(2)
        #expect(scene.serverFiles() == ["2019/11/phone.heic", "2021/05/damaged.jpg"])
        #expect(scene.session.agentLog.contains("damaged.jpg: dated by its modification time, because"), "\(scene.session.agentLog.suffix(2000))")
    }

    @Test("two different IMG_0001.jpg from different days both survive on the server: the second as IMG_0001 (1).jpg")
    func sameNameTwice() throws {
        let scene = try InstantUploadScene.watchingCamera()
        let first = MediaFiles.photo("2024:03:15 10:00:00", comment: "first card")
        try Camera.write(scene.path("Camera/IMG_0001.jpg"), first)
        try scene.waitUploaded(1)
        // The card is emptied; the camera starts counting again on another day.
        unlink(scene.path("Camera/IMG_0001.jpg"))
        let second = MediaFiles.photo("2024:04:20 18:00:00", comment: "second card")
        try Camera.write(scene.path("Camera/IMG_0001.jpg"), second)
        try scene.waitUploaded(2)
        #expect(scene.serverFiles() == ["IMG_0001 (1).jpg", "IMG_0001.jpg"])
        #expect(try TestData.sha256(ofFile: scene.server.tree() + "/Photos/IMG_0001.jpg") == (try TestData.sha256(first)), "the first is untouched")
        #expect(try TestData.sha256(ofFile: scene.server.tree() + "/Photos/IMG_0001 (1).jpg") == (try TestData.sha256(second)))
        #expect(try scene.completions() == ["Photos/IMG_0001.jpg": 1, "Photos/IMG_0001 (1).jpg": 1])
        #expect(try scene.itemsByTarget()["/Photos/IMG_0001 (1).jpg"]?.count == 1, "the row names where the second went")
    }

    @Test("--after-upload trash moves the original to the trash once uploaded, and never a failed one")
    func trashAfterUpload() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera"))
        try scene.session.startAgent()
        try scene.addRule("Camera", ["--after-upload", "trash"])
        try scene.waitWatching("camera")
        let photo = Camera.photo(1)
        try Camera.write(scene.path("Camera/IMG_1.jpg"), photo)
        try scene.waitUploaded(1)
        let trash = scene.session.home.path + "/.local/share/Trash"
        try scene.until("the original in the trash") { !FileManager.default.fileExists(atPath: scene.path("Camera/IMG_1.jpg")) }
        #expect(FileManager.default.contents(atPath: trash + "/files/IMG_1.jpg") == Data(photo))
        let info = try String(contentsOfFile: trash + "/info/IMG_1.jpg.trashinfo", encoding: .utf8)
        #expect(info.contains("Path=" + scene.path("Camera/IMG_1.jpg")))
        #expect(try TestData.sha256(ofFile: scene.server.tree() + "/Photos/IMG_1.jpg") == TestData.sha256(photo))

        // The server has no room: the upload fails, and the file stays.
        try scene.server.setQuota(availableBytes: 0)
        try Camera.write(scene.path("Camera/IMG_2.jpg"), Camera.photo(2))
        try scene.session.waitFor("the second upload failed") { items in
            items.contains { $0["target"] as? String == "/Photos/IMG_2.jpg" && $0["state"] as? String == "failed" }
        }
        sleep(1)
        #expect(FileManager.default.fileExists(atPath: scene.path("Camera/IMG_2.jpg")))
        #expect(!FileManager.default.fileExists(atPath: trash + "/files/IMG_2.jpg"))
    }

    @Test("--after-upload trash keeps an original changed in place while it was sent, its size and time kept (as a tag editor that preserves the date does): the server has the old content, the new stays")
    func trashNeedsTheSameContent() throws {
        let (scene, path) = try InstantUploadScene.photoHeldUnderTrashRule(at: "upload-finishing")
        var before = stat()
        #expect(stat(path, &before) == 0)
        let fd = open(path, O_WRONLY)
        #expect(fd >= 0 && pwrite(fd, [UInt8](repeating: 0x5a, count: 10), 10, 100) == 10)
        close(fd)
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        let edited = try TestData.sha256(ofFile: path)
        scene.session.releasePause()
        try scene.waitUploaded(1)
        try scene.until("the original kept") { try scene.rule("camera")["kept_count"] as? Int == 1 }
        #expect(try TestData.sha256(ofFile: path) == edited, "the edited original stays where it is")
        let kept = try #require((try scene.rule("camera")["kept"] as? [[String: Any]])?.first)
        #expect((kept["reason"] as? String ?? "").contains("its content is not what was uploaded"), "\(kept)")
    }

    @Test("--after-upload trash, and another file renamed over the original just as it goes: that file is put back where it was, not left in the trash, and sent itself")
    func trashTakesOnlyTheFileChecked() throws {
        let (scene, path) = try InstantUploadScene.photoHeldUnderTrashRule(at: "trash-checked")
        // An editor saves its version the usual way: written beside, renamed over it.
        try Camera.write(scene.path("Camera/.IMG_1.jpg.saving"), Camera.photo(2))
        try Camera.move(scene.path("Camera/.IMG_1.jpg.saving"), path)
        let saved = try TestData.sha256(ofFile: path)
        scene.session.releasePause()
        try scene.until("the original kept") { try scene.rule("camera")["kept_count"] as? Int == 1 }
        #expect(try TestData.sha256(ofFile: path) == saved, "the file saved over the original is where it was")
        let kept = try #require((try scene.rule("camera")["kept"] as? [[String: Any]])?.first)
        #expect((kept["reason"] as? String ?? "").contains("replaced by another file just as it went to the trash; that file is back where it was"), "\(kept)")
        // The editor's save is new content: it is sent too, beside the photo sent before.
        try scene.waitUploaded(2)
        #expect(scene.serverFiles() == ["IMG_1 (1).jpg", "IMG_1.jpg"])
        #expect(try TestData.sha256(ofFile: scene.server.tree() + "/Photos/IMG_1 (1).jpg") == saved)
    }

    @Test("files already in the folder are the baseline without --existing, and uploaded with it")
    func baseline() throws {
        let scene = try InstantUploadScene(serverFolders: ["Photos/Old", "Photos/Card", "Photos/All"])
        for i in 0..<3 { try Camera.write(scene.path("Old/IMG_\(i).jpg"), Camera.photo(i)) }
        for i in 0..<2 { try Camera.write(scene.path("All/IMG_\(i).jpg"), Camera.photo(100 + i)) }
        try scene.session.startAgent()
        let added = try scene.addRule("Old", to: "/Photos/Old")
        #expect(added.stdout.contains("3 files already there are left alone"))
        try scene.addRule("All", to: "/Photos/All", ["--existing"])
        try scene.waitWatching("old")
        try Camera.write(scene.path("Old/new.jpg"), Camera.photo(50))
        try scene.waitUploaded(3)
        #expect(scene.serverFiles("Photos/Old") == ["new.jpg"])
        #expect(scene.serverFiles("Photos/All") == ["IMG_0.jpg", "IMG_1.jpg"])
        #expect(try scene.rule("old")["baseline"] as? Int == 3)

        // A rule written into the config by hand for a card not inserted yet: the card's
        // photos arrive after the rule, and are sent when it comes.
        let config = try String(contentsOfFile: scene.session.home.path + "/config/instant-upload/config.ini", encoding: .utf8)
        try scene.session.writeConfig(config + "\n[watch \"card\"]\nfolder = \"\(scene.path("Card"))\"\nto = /Photos/Card\nsettle_seconds = 1\n")
        try scene.until("rule card waiting for its folder") { try scene.rule("card")["state"] as? String == "folder_missing" }
        for i in 0..<4 { try Camera.write(scene.path("card-reader/DCIM/IMG_\(i).jpg"), Camera.photo(200 + i)) }
        try Camera.move(scene.path("card-reader"), scene.path("Card"))
        try scene.waitWatching("card")
        try Camera.write(scene.path("Card/DCIM/IMG_9.jpg"), Camera.photo(209))
        try scene.waitUploaded(8)
        #expect(scene.serverFiles("Photos/Card") == ["IMG_0.jpg", "IMG_1.jpg", "IMG_2.jpg", "IMG_3.jpg", "IMG_9.jpg"])
        #expect(try scene.rule("card")["baseline"] as? Int == 0)

        // A rule written by hand for a folder that is there: what it holds when the agent
        // first sees it is the baseline.
        for i in 0..<2 { try Camera.write(scene.path("Scans/IMG_\(i).jpg"), Camera.photo(300 + i)) }
        let withCard = try String(contentsOfFile: scene.session.home.path + "/config/instant-upload/config.ini", encoding: .utf8)
        try scene.session.writeConfig(withCard + "\n[watch \"scans\"]\nfolder = \"\(scene.path("Scans"))\"\nto = /Photos/Old\nsettle_seconds = 1\n")
        try scene.waitWatching("scans")
        try scene.until("the baseline of rule scans") { try scene.rule("scans")["baseline"] as? Int == 2 }
        try Camera.write(scene.path("Scans/new scan.jpg"), Camera.photo(310))
        try scene.waitUploaded(9)
        #expect(scene.serverFiles("Photos/Old") == ["new scan.jpg", "new.jpg"])
    }

    @Test("rules come, pause, resume and go without restarting the agent")
    func liveChanges() throws {
        let scene = try InstantUploadScene.watchingCamera()
        let paused = try scene.session.cli(["watch", "pause", "camera"])
        #expect(paused.status == 0, "\(paused.stderr)")
        try scene.until("rule camera paused") { try scene.rule("camera")["state"] as? String == "paused" }
        try Camera.write(scene.path("Camera/while-paused.jpg"), Camera.photo(1))
        sleep(3)
        #expect(try scene.session.items().isEmpty, "a paused rule queued a file")
        #expect(try scene.session.cli(["watch", "resume", "camera"]).status == 0)
        try scene.waitUploaded(1)
        #expect(scene.serverFiles() == ["while-paused.jpg"])

        let removed = try scene.session.cli(["watch", "remove", "camera"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try scene.rules().isEmpty)
        try Camera.write(scene.path("Camera/after-removal.jpg"), Camera.photo(2))
        sleep(3)
        #expect(try scene.session.items().count == 1, "a removed rule queued a file")
    }
}

extension TestData {
    static func sha256(_ bytes: [UInt8]) throws -> String {
        let folder = TemporaryFolder("iu-sha")
        return try sha256(ofFile: try folder.file("bytes", bytes: bytes))
    }
}

extension InstantUploadScene {
    /// A rule that moves originals to the trash, and one photo (`Camera/IMG_1.jpg`, its path
    /// returned) whose upload waits at the pause window `window` (`AgentHarness.pause(at:)`).
    static func photoHeldUnderTrashRule(at window: String) throws -> (InstantUploadScene, String) {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera"))
        scene.session.pause(at: window)
        try scene.session.startAgent()
        try scene.addRule("Camera", ["--after-upload", "trash"])
        try scene.waitWatching("camera")
        let path = scene.path("Camera/IMG_1.jpg")
        try Camera.write(path, Camera.photo(1))
        try scene.session.waitForAgentLog("paused at \(window)")
        return (scene, path)
    }
}
