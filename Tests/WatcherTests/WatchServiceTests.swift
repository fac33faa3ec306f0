import CSystem
import Dispatch
import Foundation
import Glibc
import Platform
import Queue
import Testing
import TestSupport
@testable import Watcher

@Suite("What holds a rule's uploads")
struct RuleHoldTests {
    static let home = Account(id: 1, name: "home", webdavURL: "http://127.0.0.1/dav/", tusURL: "http://127.0.0.1/files/", username: "a")
    static var wifiAccount: Account { var a = home; a.wifiOnly = true; return a }
    static let battery = PowerSource(state: .battery, detail: "BAT0 discharging 54 %")
    static let mains = PowerSource(state: .ac, detail: "AC")

    static func rule(wifi: Bool? = nil, mains: Bool = false, paused: Bool = false) -> WatchRule {
        WatchRule(id: "cam", folder: LocalPath("/c"), remoteFolder: "/C", wifiOnly: wifi, onACPower: mains, paused: paused)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var what: String
        var rule: WatchRule?
        var account: Account
        var onWiFi: Bool
        var power: PowerSource
        var folder: FolderAbsence? = nil
        var held: ReasonCode?
        var testDescription: String { what }
    }

    @Test("the rule's own settings first, its account's Wi-Fi flag as the default", arguments: [
        Case(what: "nothing set", rule: rule(), account: home, onWiFi: false, power: battery, held: nil),
        Case(what: "Wi-Fi only, wired", rule: rule(wifi: true), account: home, onWiFi: false, power: mains, held: .wifi),
        Case(what: "Wi-Fi only, on Wi-Fi", rule: rule(wifi: true), account: home, onWiFi: true, power: mains, held: nil),
        Case(what: "the account's flag, wired", rule: rule(), account: wifiAccount, onWiFi: false, power: mains, held: .wifi),
        Case(what: "the rule overrides its account's flag", rule: rule(wifi: false), account: wifiAccount, onWiFi: false, power: mains, held: nil),
        Case(what: "mains only, on battery", rule: rule(mains: true), account: home, onWiFi: true, power: battery, held: .battery),
        Case(what: "mains only, plugged in", rule: rule(mains: true), account: home, onWiFi: true, power: mains, held: nil),
        Case(what: "mains only, power unknown", rule: rule(mains: true), account: home, onWiFi: true, power: PowerSource(state: .unknown), held: nil),
        Case(what: "paused", rule: rule(paused: true), account: home, onWiFi: true, power: mains, held: .paused),
        Case(what: "a rule no longer in the config follows the account", rule: nil, account: wifiAccount, onWiFi: false, power: battery, held: .wifi),
        Case(what: "a removed rule, account without the flag", rule: nil, account: home, onWiFi: false, power: battery, held: nil),
        Case(what: "its folder not there (a card taken out)", rule: rule(), account: home, onWiFi: true, power: mains, folder: .missing,
             held: .folderMissing),
        Case(what: "its folder not there, and on battery", rule: rule(mains: true), account: home, onWiFi: true, power: battery, folder: .missing,
             held: .folderMissing),
        Case(what: "paused, its folder not there", rule: rule(paused: true), account: home, onWiFi: true, power: mains, folder: .missing,
             held: .paused),
    ])
    func decide(_ c: Case) {
        let reason = RuleHold.reason(rule: c.rule, account: c.account, wifi: { c.onWiFi ? nil : "the network goes out through eth0, which is not Wi-Fi" },
                                     power: { c.power }, folderAbsence: { _ in c.folder })
        #expect(reason?.code == c.held)
    }

    @Test("the reason says why, in the person's words")
    func words() throws {
        let noneMissing: (LocalPath) -> FolderAbsence? = { _ in nil }
        let battery = try #require(RuleHold.reason(rule: Self.rule(mains: true), account: Self.home, wifi: { nil }, power: { Self.battery },
                                                   folderAbsence: noneMissing))
        #expect(battery.message.contains("BAT0 discharging 54 %") && battery.message.contains("cam"))
        let wifi = try #require(RuleHold.reason(rule: Self.rule(wifi: true), account: Self.home, wifi: { "the network goes out through eth0, which is not Wi-Fi" },
                                                power: { Self.mains }, folderAbsence: noneMissing))
        #expect(wifi.message.contains("eth0"))
        let paused = try #require(RuleHold.reason(rule: Self.rule(paused: true), account: Self.home, wifi: { nil }, power: { Self.mains },
                                                  folderAbsence: noneMissing))
        #expect(paused.action.contains("watch resume cam"))
        let away = try #require(RuleHold.reason(rule: Self.rule(), account: Self.home, wifi: { nil }, power: { Self.mains },
                                                folderAbsence: { $0 == LocalPath("/c") ? .missing : nil }))
        #expect(away.message.contains("/c is not there") && away.action.contains("cancel ID"))
        let unmounted = try #require(RuleHold.reason(rule: Self.rule(), account: Self.home, wifi: { nil }, power: { Self.mains },
                                                     folderAbsence: { _ in .unmounted }))
        #expect(unmounted.code == .folderMissing && unmounted.message.contains("not mounted on /c"), "\(unmounted.message)")
    }
}

@Suite("A rule's memory while its baseline is taken")
struct RuleMemoryTests {
    let a = (LocalPath("/c/a.jpg"), FileFingerprint(device: 1, inode: 2, size: 3, mtimeNanoseconds: 4))
    let b = (LocalPath("/c/b.jpg"), FileFingerprint(device: 1, inode: 5, size: 6, mtimeNanoseconds: 7))

    @Test("while baselining every file is called taken and recorded; afterwards they are memory, and new files are new")
    func baseline() throws {
        let memory = RuleMemory(taken: TakenSet(), baselining: true)
        #expect(memory.status(of: a.1, at: a.0) == .taken)
        #expect(memory.status(of: b.1, at: b.0) == .taken)
        let recorded = try #require(memory.endBaseline())
        #expect(recorded.map(\.0) == [a.0, b.0])
        #expect(memory.endBaseline() == nil, "a baseline is taken once")
        #expect(memory.status(of: a.1, at: a.0) == .taken)
        #expect(memory.status(of: a.1, at: LocalPath("/c/moved.jpg")) == .takenAt(a.0))
        #expect(memory.status(of: FileFingerprint(device: 1, inode: 9, size: 9, mtimeNanoseconds: 9), at: LocalPath("/c/new.jpg")) == .new)
    }

    @Test("without a baseline to take, the memory answers from what was taken")
    func normal() {
        let taken = TakenSet()
        taken.insert(a.1, at: a.0)
        let memory = RuleMemory(taken: taken, baselining: false)
        #expect(!memory.isBaselining)
        #expect(memory.status(of: b.1, at: b.0) == .new)
        #expect(memory.endBaseline() == nil)
    }
}

@Suite("After an upload, the original", .serialized)
struct AfterUploadTests {
    /// A queue with one completed upload of `file` by rule `cam`, and the service's thread
    /// state around it.
    struct Scene {
        let home = TemporaryFolder("iu-home")
        let store: QueueStore
        let worker: WatchWorker
        let file: String
        let id: Int64

        /// `verified`: the server showed the file after its upload (`Transfer.verifiedAt`).
        init(afterUpload: WatchRule.AfterUpload, verified: Bool = true) throws {
            let paths = XDGPaths(environment: ["HOME": home.path, "XDG_STATE_HOME": home.path + "/state", "XDG_DATA_HOME": home.path + "/data",
                                               "XDG_CONFIG_HOME": home.path + "/config", "XDG_RUNTIME_DIR": home.path + "/run"])
            store = try QueueStore(path: paths.queueDatabase)
            let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/", tusURL: "http://127.0.0.1:1/files/", username: "a")
            file = try home.file("Camera/IMG_1.jpg", bytes: MediaFiles.photo("2024:03:15 10:00:00"))
            let folder = LocalPath(home.path + "/Camera")
            try store.resetWatchMemory(rule: "cam", folder: folder)
            let outcome = try Intake.enqueuePlanned([.init(file: LocalPath(file), remotePath: "/Photos/IMG_1.jpg")], account: account,
                                                    origin: .auto, watchRule: "cam", store: store)
            guard case .success(let queued) = outcome[0] else { throw TestFailure("not queued: \(outcome[0])") }
            id = queued.id
            try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath(file), fingerprint: queued.fingerprint, kind: .upload, transferID: id)])
            try store.start(id, resumedAt: 0)
            try store.complete(id, sha256: try TestData.sha256(ofFile: file), bytes: queued.fingerprint.size, verified: verified)
            worker = WatchWorker(options: WatchService.Options(paths: paths) {}, inbox: try WatchInbox(), published: PublishedRules(), presence: FolderPresence())
            worker.rules = [WatchRule(id: "cam", folder: folder, remoteFolder: "/Photos", afterUpload: afterUpload)]
        }

        var trashed: String { home.path + "/data/Trash/files/IMG_1.jpg" }

        func completed() throws -> Transfer { try #require(try store.transfer(id: id)) }
    }

    @Test("goes to the trash when the rule says so and it is the file that was uploaded; the step is done once")
    func trashed() throws {
        let scene = try Scene(afterUpload: .trash)
        #expect(try scene.store.uploadsAwaitingAfterStep(rule: "cam") == [scene.id], "completion is remembered until the original is dealt with")
        try scene.worker.afterUpload(try scene.completed(), store: scene.store)
        #expect(!FileManager.default.fileExists(atPath: scene.file))
        #expect(FileManager.default.fileExists(atPath: scene.trashed))
        #expect(try scene.store.uploadsAwaitingAfterStep(rule: "cam").isEmpty)
    }

    @Test("stays when it changed after the upload (another fingerprint), and the rule says why")
    func changed() throws {
        let scene = try Scene(afterUpload: .trash)
        let fd = open(scene.file, O_WRONLY | O_APPEND)
        _ = write(fd, "x", 1)
        close(fd)
        try scene.worker.afterUpload(try scene.completed(), store: scene.store)
        #expect(FileManager.default.fileExists(atPath: scene.file))
        #expect(!FileManager.default.fileExists(atPath: scene.trashed))
        #expect(try scene.store.watchOverview(rule: "cam").kept.first?.reason.contains("changed") == true)
    }

    @Test("stays when it was edited in place after it was queued, its size and time kept, on a file system whose clock runs behind this machine's (a NAS): the bytes are compared, not the clocks")
    func editedBehindTheQueuesClock() throws {
        let scene = try Scene(afterUpload: .trash)
        let uploaded = try TestData.sha256(ofFile: scene.file)
        // A tag editor that keeps the date: the same size, the time set back as it was.
        var before = stat()
        #expect(stat(scene.file, &before) == 0)
        let fd = open(scene.file, O_WRONLY)
        #expect(fd >= 0 && pwrite(fd, [UInt8](repeating: 0x5a, count: 10), 10, 100) == 10)
        close(fd)
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, scene.file, &times, 0) == 0)
        let edited = try TestData.sha256(ofFile: scene.file)
        #expect(edited != uploaded)
        // The file's change time, from the file system's clock, is a minute before the row
        // was made by this machine's: as if the NAS's clock ran that far behind.
        var after = stat()
        #expect(stat(scene.file, &after) == 0)
        _ = try scene.store.database.run("UPDATE transfers SET created_at = ? WHERE id = ?", [.int(after.st_ctim.milliseconds + 60_000), .int(scene.id)])

        try scene.worker.afterUpload(try scene.completed(), store: scene.store)
        #expect(FileManager.default.fileExists(atPath: scene.file), "the only copy of the edit stays")
        #expect(!FileManager.default.fileExists(atPath: scene.trashed))
        #expect(try TestData.sha256(ofFile: scene.file) == edited)
        let kept = try scene.store.watchOverview(rule: "cam").kept
        #expect(kept.first?.reason.contains("its content is not what was uploaded") == true, "\(kept)")
    }

    @Test("goes to the trash, on a file system whose clock runs behind, when nothing touched it since it was queued")
    func untouchedBehindTheQueuesClock() throws {
        let scene = try Scene(afterUpload: .trash)
        var st = stat()
        #expect(stat(scene.file, &st) == 0)
        #expect(try scene.store.queuedChangeTime(of: scene.id) == st.st_ctim.nanoseconds, "the rule kept the change time it saw")
        _ = try scene.store.database.run("UPDATE transfers SET created_at = ? WHERE id = ?", [.int(st.st_ctim.milliseconds + 60_000), .int(scene.id)])
        try scene.worker.afterUpload(try scene.completed(), store: scene.store)
        #expect(FileManager.default.fileExists(atPath: scene.trashed))
    }

    @Test("stays when the server did not show the file after its upload, and the rule says why")
    func notVerified() throws {
        let scene = try Scene(afterUpload: .trash, verified: false)
        try scene.worker.afterUpload(try scene.completed(), store: scene.store)
        #expect(FileManager.default.fileExists(atPath: scene.file))
        #expect(!FileManager.default.fileExists(atPath: scene.trashed))
        let kept = try scene.store.watchOverview(rule: "cam").kept
        #expect(kept.map(\.path) == [LocalPath(scene.file)])
        #expect(kept.first?.reason.contains("the server did not show the uploaded file") == true, "\(kept)")
        #expect(try scene.store.uploadsAwaitingAfterStep(rule: "cam").isEmpty, "dealt with: kept, once")
    }

    @Test("stays when the rule keeps originals, with nothing to say about it")
    func kept() throws {
        let scene = try Scene(afterUpload: .keep)
        try scene.worker.afterUpload(try scene.completed(), store: scene.store)
        #expect(FileManager.default.fileExists(atPath: scene.file))
        #expect(try scene.store.uploadsAwaitingAfterStep(rule: "cam").isEmpty)
        #expect(try scene.store.watchOverview(rule: "cam").keptCount == 0)
    }

    @Test("an upload that completed while the agent stopped is dealt with when the rule starts again")
    func afterRestart() throws {
        let scene = try Scene(afterUpload: .trash)
        try scene.worker.finishAfterUploads(of: scene.worker.rules[0], store: scene.store)
        #expect(FileManager.default.fileExists(atPath: scene.trashed))
        #expect(try scene.store.uploadsAwaitingAfterStep(rule: "cam").isEmpty)
    }
}

@Suite("The watch service's thread")
struct WatchServiceThreadTests {
    @Test("a stop asked for while the rules are first read still ends the thread")
    func stopDuringFirstReading() throws {
        let home = TemporaryFolder("iu-home")
        let paths = XDGPaths(environment: ["HOME": home.path, "XDG_STATE_HOME": home.path + "/state", "XDG_CONFIG_HOME": home.path + "/config",
                                           "XDG_RUNTIME_DIR": home.path + "/run"])
        try home.file("config/instant-upload/config.ini", bytes: Array("[watch \"cam\"]\nfolder = \(home.path)/Camera\nto = /Photos\n".utf8))
        let inbox = try WatchInbox()
        let options = WatchService.Options(paths: paths) {}
        // Already asked when the thread starts: its first reading of the rules sees the
        // request in the inbox, and the thread must not then sleep on a drained doorbell.
        inbox.requestStop()
        let ended = DispatchSemaphore(value: 0)
        let thread = try DedicatedThread(name: "iu-watch-test") {
            WatchWorker(options: options, inbox: inbox, published: PublishedRules(), presence: FolderPresence()).run()
            ended.signal()
        }
        let result = ended.wait(timeout: .now() + 20)
        #expect(result == .success, "the service's thread did not end")
        if result == .success { thread.join() } else { thread.detach() }
    }
}

extension FolderWatcherTests {
    /// Its rule's watcher is one more watcher thread of this process: the tests that count
    /// them (`WholeMachineTests`) run on their own.
    @Suite("A file the watcher found and could not queue")
    struct NotQueued {
        @Test("shows on its rule with the reason, is looked at again with no event to say so, and goes once it can be read")
        func shownAndTriedAgain() throws {
            try Root.require("the service reads as another user, to whom a file of root's is closed")
            let home = TemporaryFolder("iu-home")
            chmod(home.path, 0o755)
            let paths = XDGPaths(environment: ["HOME": home.path, "XDG_STATE_HOME": home.path + "/state", "XDG_DATA_HOME": home.path + "/data",
                                               "XDG_CONFIG_HOME": home.path + "/config", "XDG_RUNTIME_DIR": home.path + "/run"])
            let store = try QueueStore(path: paths.queueDatabase)
            try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/", tusURL: "http://127.0.0.1:1/files/", username: "a")
            try Files.makeFolder(home.path + "/Camera")
            chmod(home.path + "/Camera", 0o755)
            try home.file("config/instant-upload/config.ini",
                          bytes: Array("[watch \"cam\"]\nfolder = \(home.path)/Camera\nto = /Photos\nexisting = yes\nsettle_seconds = 1\n".utf8))
            // The service's own connection, opened here: the user it reads as below could not
            // open the private state folder, and needs not, with the files already open.
            let inbox = try WatchInbox()
            nonisolated(unsafe) let worker = WatchWorker(options: WatchService.Options(paths: paths) {}, inbox: inbox, published: PublishedRules(), presence: FolderPresence())
            worker.store = try QueueStore(path: paths.queueDatabase)
            _ = try worker.store?.accounts()
            let thread = try DedicatedThread(name: "iu-watch-test") {
                // The rule's watcher thread is made by this one and reads as it does.
                _ = csystem_set_thread_fsuid(65534)
                worker.run()
            }
            defer {
                inbox.requestStop()
                thread.join()
            }
            func status() throws -> [RuleTrouble] {
                RuleTrouble.decode(try store.watchOverview(rule: "cam").status?.troubles ?? "[]")
            }
            try Poll.until("the rule watching") { try store.watchOverview(rule: "cam").status?.state == "watching" }

            let outside = TemporaryFolder("iu-outside")
            let made = try outside.file("locked.jpg", bytes: Files.photo(1))
            chmod(made, 0o600)
            let path = home.path + "/Camera/locked.jpg"
            try Files.rename(made, path)
            try Poll.until("the file shown as not queued") { try status().contains { $0.code == "not_queued" && $0.path == path } }
            let trouble = try #require(try status().first { $0.code == "not_queued" })
            #expect(trouble.message.contains("permission denied; make it readable (chmod u+r)"), "\(trouble)")
            #expect(try store.transfers().isEmpty)

            // A change of mode makes no event the watcher hears: only looking again finds it.
            chmod(path, 0o644)
            try Poll.until("the file queued", seconds: 60) { try store.transfers().map(\.localPath) == [LocalPath(path)] }
            try Poll.until("the trouble gone") { try status().isEmpty }
        }

        @Test("renamed after its watcher handed it over and before it was queued, it is queued once under its new name, whether its move comes with it or after")
        func renamedBeforeQueued() throws {
            let (home, paths, store) = try FolderWatcherTests.serviceHome { "[watch \"cam\"]\nfolder = \($0)/Camera\nto = /Photos\nexisting = yes\nsettle_seconds = 1\n" }
            // The service's work is done on this thread, step by step: the watcher's messages
            // wait in the inbox until the test takes them, and are queued when it says.
            let worker = WatchWorker(options: WatchService.Options(paths: paths) {}, inbox: try WatchInbox(), published: PublishedRules(), presence: FolderPresence())
            worker.reload()
            let run = try #require(worker.running["cam"])
            defer { run.watcher.stop() }
            try Poll.until("the rule watching") { run.watcher.status.state == .watching }

            let (first, second) = (home.path + "/Camera/IMG_1.jpg", home.path + "/Camera/IMG_2.jpg")
            let (firstNow, secondNow) = (home.path + "/Camera/Beach.jpg", home.path + "/Camera/Harbour.jpg")
            try Files.write(first, Files.photo(1))
            try Files.write(second, Files.photo(2))
            /// How many of the messages waiting, all taken from the inbox, are of a kind.
            func waiting(_ kind: (WatchInbox.Message) -> Bool) -> Int {
                worker.collect()
                return worker.backlog.filter(kind).count
            }
            try Poll.until("both handed over") { waiting { if case .found = $0 { true } else { false } } == 2 }
            // The first is renamed, and its move waits in the backlog behind its hand-over.
            try Files.rename(first, firstNow)
            try Poll.until("the first one's move") { waiting { if case .moved = $0 { true } else { false } } == 1 }
            // The second is renamed too, but its move comes after the hand-overs are dealt with.
            try Files.rename(second, secondNow)
            worker.handleBacklog()
            try Poll.until("both queued") {
                worker.collect()
                worker.handleBacklog()
                return try store.transfers().count >= 2
            }
            // A whole scan afterwards finds nothing more to queue.
            let scans = run.watcher.status.scans
            run.watcher.scanNow()
            try Poll.until("a scan") { run.watcher.status.scans > scans && run.watcher.status.settling == 0 }
            worker.collect()
            worker.handleBacklog()
            #expect(try store.transfers().map(\.localPath).sorted() == [LocalPath(firstNow), LocalPath(secondNow)])
        }
    }

    /// A home for the watch service with one account and `config` as its config file: the
    /// folder (kept while it is), its paths, and the queue.
    static func serviceHome(config: (String) -> String) throws -> (home: TemporaryFolder, paths: XDGPaths, store: QueueStore) {
        let home = TemporaryFolder("iu-home")
        let paths = XDGPaths(environment: ["HOME": home.path, "XDG_STATE_HOME": home.path + "/state", "XDG_DATA_HOME": home.path + "/data",
                                           "XDG_CONFIG_HOME": home.path + "/config", "XDG_RUNTIME_DIR": home.path + "/run"])
        let store = try QueueStore(path: paths.queueDatabase)
        try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        try Files.makeFolder(home.path + "/Camera")
        try home.file("config/instant-upload/config.ini", bytes: Array(config(home.path).utf8))
        return (home, paths, store)
    }
}
