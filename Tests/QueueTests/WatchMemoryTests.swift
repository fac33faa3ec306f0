import Foundation
import Platform
import Queue
import TestSupport
import Testing

@Suite("A watch rule's memory and holds in the queue")
struct WatchMemoryTests {
    let folder = TemporaryFolder("iu-queue")

    func makeStore() throws -> (QueueStore, Account) {
        let store = try QueueStore(path: folder.path + "/state/queue.sqlite3")
        let account = try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/a/", tusURL: "http://127.0.0.1:1/files/", username: "a")
        return (store, account)
    }

    static func fingerprint(_ n: Int64, size: Int64 = 100) -> FileFingerprint {
        FileFingerprint(device: 1, inode: UInt64(n), size: size, mtimeNanoseconds: n)
    }

    /// What a rule's watcher loads when it starts: every path the rule took, and its fingerprint.
    static func taken(_ store: QueueStore, rule: String) throws -> [(path: LocalPath, fingerprint: FileFingerprint)] {
        var files: [(path: LocalPath, fingerprint: FileFingerprint)] = []
        try store.eachTakenFile(rule: rule) { files.append(($0, $1)) }
        return files
    }

    func upload(_ account: Account, _ path: String, rule: String?, origin: Origin = .auto) -> NewTransfer {
        NewTransfer(direction: .upload, origin: origin, accountID: account.id, localPath: LocalPath(path),
                    remotePath: "/Photos/" + (path.split(separator: "/").last.map(String.init) ?? path), bytesTotal: 100, watchRule: rule)
    }

    @Test("files are recorded per rule and path: a new file at a taken path replaces the old record")
    func records() throws {
        let (store, _) = try makeStore()
        #expect(try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(1), kind: .upload)]) == false,
                "a rule without memory (removed) records nothing")
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(1), kind: .upload),
                                            TakenFile(path: LocalPath("/c/old.jpg"), fingerprint: Self.fingerprint(2), kind: .baseline)])
        try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(3), kind: .upload)])
        #expect(try store.takenRecords(rule: "cam", paths: [LocalPath("/c/a.jpg"), LocalPath("/c/new.jpg")]).mapValues(\.file.fingerprint)
                == [LocalPath("/c/a.jpg"): Self.fingerprint(3)])
        #expect(try Self.taken(store, rule: "cam").count == 2)
        #expect(try store.takenContent(rule: "cam", sizes: [100, 7]).mapValues { $0.map(\.file.path) } == [100: [LocalPath("/c/a.jpg")]],
                "the baseline is no content the rule took")
        let overview = try store.watchOverview(rule: "cam")
        #expect(overview.taken == 1 && overview.baseline == 1 && overview.lastTaken == LocalPath("/c/a.jpg"))

        // A batch longer than one statement takes is asked in pieces.
        let many = (0..<1_200).map { TakenFile(path: LocalPath("/c/many/\($0).jpg"), fingerprint: Self.fingerprint(Int64($0), size: 1_000 + Int64($0)), kind: .upload) }
        try store.recordTaken(rule: "cam", many)
        #expect(try store.takenRecords(rule: "cam", paths: many.map(\.path)).count == 1_200)
        #expect(try store.takenContent(rule: "cam", sizes: Set(many.map(\.fingerprint.size))).values.map(\.count).reduce(0, +) == 1_200)

        try store.removeWatchMemory(rule: "cam")
        #expect(try Self.taken(store, rule: "cam").isEmpty)
        #expect(try store.watchMemory(rule: "cam") == nil)
    }

    @Test("a rename inside the folder moves the records and the waiting uploads' paths; rows in progress are the agent's to move; nothing else changes")
    func renames() throws {
        let (store, account) = try makeStore()
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        try store.recordTaken(rule: "cam", ["/c/a/1.jpg", "/c/a/sub/2.jpg", "/c/ab/3.jpg", "/c/2024/1.jpg"].enumerated().map {
            TakenFile(path: LocalPath($0.element), fingerprint: Self.fingerprint(Int64($0.offset)), kind: .upload)
        } + [TakenFile(path: LocalPath(bytes: Array("/c/a/caf".utf8) + [0xE9] + Array(".jpg".utf8)), fingerprint: Self.fingerprint(7), kind: .upload)])
        let ids = try store.enqueue([upload(account, "/c/a/1.jpg", rule: "cam"), upload(account, "/c/a/sub/2.jpg", rule: "cam"),
                                     upload(account, "/c/ab/3.jpg", rule: "cam"), upload(account, "/c/a/1.jpg", rule: nil, origin: .manual),
                                     upload(account, "/c/a/running.jpg", rule: "cam")])
        try store.start(ids[1], resumedAt: 0)
        try store.complete(ids[1], sha256: nil, bytes: 100)
        try store.start(ids[4], resumedAt: 0)
        #expect(try store.moveTaken(rule: "cam", from: LocalPath("/c/a"), to: LocalPath("/c/2024")) == 1, "one row in progress is asked to move")
        #expect(try store.transfer(id: ids[4])?.localPath == LocalPath("/c/a/running.jpg"), "the watcher leaves a row in progress as it is")
        // Renamed again before the agent wrote the first move: the request follows.
        #expect(try store.moveTaken(rule: "cam", from: LocalPath("/c/2024/running.jpg"), to: LocalPath("/c/2024/kept.jpg")) == 1)
        #expect(try store.applyRequestedMoves() == 1)
        #expect(try store.transfer(id: ids[4])?.localPath == LocalPath("/c/2024/kept.jpg"), "the agent writes where the file is now")
        #expect(try store.applyRequestedMoves() == 0, "each move is written once")
        let taken = try Self.taken(store, rule: "cam")
        #expect(Set(taken.map(\.path)) == [LocalPath("/c/2024/1.jpg"), LocalPath("/c/2024/sub/2.jpg"), LocalPath("/c/ab/3.jpg"),
                                            LocalPath(bytes: Array("/c/2024/caf".utf8) + [0xE9] + Array(".jpg".utf8))],
                "a name that is not UTF-8 keeps its bytes")
        #expect(taken.first { $0.path == LocalPath("/c/2024/1.jpg") }?.fingerprint == Self.fingerprint(0),
                "the record of a file that was at the new path is gone")
        let paths = try ids.prefix(4).map { try store.transfer(id: $0)?.localPath.text }
        #expect(paths == ["/c/2024/1.jpg", "/c/a/sub/2.jpg", "/c/ab/3.jpg", "/c/a/1.jpg"],
                "queued uploads of the rule follow; a completed one and another front door's are left as they were")
    }

    @Test("two files, two folders, or a file and a folder, that swapped names keep their records and rows, each under the other's name; neither record is dropped")
    func swappedNames() throws {
        let (store, account) = try makeStore()
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(1), kind: .upload),
                                            TakenFile(path: LocalPath("/c/b.jpg"), fingerprint: Self.fingerprint(2), kind: .upload)])
        let ids = try store.enqueue([upload(account, "/c/a.jpg", rule: "cam"), upload(account, "/c/b.jpg", rule: "cam")])
        try store.start(ids[1], resumedAt: 0)
        #expect(try store.exchangeTaken(rule: "cam", LocalPath("/c/a.jpg"), LocalPath("/c/b.jpg")) == 1, "the row in progress is asked to move")
        let taken = try Self.taken(store, rule: "cam")
        #expect(taken.count == 2)
        #expect(taken.first { $0.path == LocalPath("/c/b.jpg") }?.fingerprint == Self.fingerprint(1))
        #expect(taken.first { $0.path == LocalPath("/c/a.jpg") }?.fingerprint == Self.fingerprint(2))
        #expect(try store.transfer(id: ids[0])?.localPath == LocalPath("/c/b.jpg"), "the waiting upload follows its file")
        #expect(try store.applyRequestedMoves() == 1)
        #expect(try store.transfer(id: ids[1])?.localPath == LocalPath("/c/a.jpg"), "the agent writes where the file is now")

        // Two folders, each with a photo of the same name.
        try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath("/c/Trip/IMG_1.jpg"), fingerprint: Self.fingerprint(3), kind: .upload),
                                            TakenFile(path: LocalPath("/c/Home/IMG_1.jpg"), fingerprint: Self.fingerprint(4), kind: .upload)])
        try store.exchangeTaken(rule: "cam", LocalPath("/c/Trip"), LocalPath("/c/Home"))
        let folders = try Self.taken(store, rule: "cam")
        #expect(folders.count == 4)
        #expect(folders.first { $0.path == LocalPath("/c/Home/IMG_1.jpg") }?.fingerprint == Self.fingerprint(3))
        #expect(folders.first { $0.path == LocalPath("/c/Trip/IMG_1.jpg") }?.fingerprint == Self.fingerprint(4))

        // A file and a folder.
        try store.exchangeTaken(rule: "cam", LocalPath("/c/a.jpg"), LocalPath("/c/Trip"))
        let mixed = try Self.taken(store, rule: "cam")
        #expect(mixed.count == 4)
        #expect(mixed.first { $0.path == LocalPath("/c/Trip") }?.fingerprint == Self.fingerprint(2))
        #expect(mixed.first { $0.path == LocalPath("/c/a.jpg/IMG_1.jpg") }?.fingerprint == Self.fingerprint(4))
    }

    @Test("a file renamed over another the rule took, whose upload has not completed: that upload goes with it (removed, or cancelled once begun on the server); the renamed file keeps its own, and a completed one is left")
    func renamedOverOneWaiting() throws {
        let (store, account) = try makeStore()
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        let ids = try store.enqueue([upload(account, "/c/a.jpg", rule: "cam"), upload(account, "/c/b.jpg", rule: "cam"),
                                     upload(account, "/c/c.jpg", rule: "cam"), upload(account, "/c/d.jpg", rule: "cam")])
        try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(1), kind: .upload, transferID: ids[0]),
                                            TakenFile(path: LocalPath("/c/b.jpg"), fingerprint: Self.fingerprint(2), kind: .upload, transferID: ids[1]),
                                            TakenFile(path: LocalPath("/c/c.jpg"), fingerprint: Self.fingerprint(3), kind: .upload, transferID: ids[2]),
                                            TakenFile(path: LocalPath("/c/d.jpg"), fingerprint: Self.fingerprint(4), kind: .upload, transferID: ids[3])])
        try store.database.run("UPDATE transfers SET upload_url = '/dav/.c.jpg.begun' WHERE id = ?", [.int(ids[2])])
        try store.moveTaken(rule: "cam", from: LocalPath("/c/a.jpg"), to: LocalPath("/c/b.jpg"))
        #expect(try store.transfer(id: ids[1]) == nil, "b.jpg's upload, nothing begun, is removed")
        #expect(try store.transfer(id: ids[0])?.localPath == LocalPath("/c/b.jpg"), "a.jpg's follows it")
        try store.moveTaken(rule: "cam", from: LocalPath("/c/b.jpg"), to: LocalPath("/c/c.jpg"))
        #expect(try store.transfer(id: ids[2])?.cancelRequested == true, "c.jpg's, begun, is cancelled")
        #expect(try store.transfer(id: ids[0])?.localPath == LocalPath("/c/c.jpg"))
        #expect(try store.transfer(id: ids[0])?.cancelRequested == false)
        try store.start(ids[3], resumedAt: 0)
        _ = try store.complete(try #require(try store.transfer(id: ids[3])), sha256: nil, bytes: 100)
        try store.moveTaken(rule: "cam", from: LocalPath("/c/c.jpg"), to: LocalPath("/c/d.jpg"))
        #expect(try store.transfer(id: ids[3])?.state == .completed, "a completed upload is history, and stays")
        #expect(try Self.taken(store, rule: "cam").map(\.path) == [LocalPath("/c/d.jpg")])
    }

    @Test("a completed upload teaches the rule its content, and waits for its after-upload step")
    func completion() throws {
        let (store, account) = try makeStore()
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        let id = try store.enqueue([upload(account, "/c/a.jpg", rule: "cam")])[0]
        try store.recordTaken(rule: "cam", [TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(1), kind: .upload, transferID: id)])
        #expect(try store.uploadsAwaitingAfterStep(rule: "cam").isEmpty)
        try store.start(id, resumedAt: 0)
        try store.complete(id, sha256: "ab12", bytes: 100)
        #expect(try store.takenContent(rule: "cam", sizes: [100])[100]?.first?.file.sha256 == "ab12")
        #expect(try store.uploadsAwaitingAfterStep(rule: "cam") == [id])
        try store.markAfterUploadDone(transferID: id)
        #expect(try store.uploadsAwaitingAfterStep(rule: "cam").isEmpty)
    }

    @Test("a record says how its upload stands: waiting until it starts, then started, completed or failed, or gone with its row")
    func standings() throws {
        let (store, account) = try makeStore()
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        let ids = try store.enqueue(["waits", "runs", "done", "failed", "cancelled"].map { upload(account, "/c/\($0).jpg", rule: "cam") })
        try store.recordTaken(rule: "cam", ids.enumerated().map { index, id in
            TakenFile(path: LocalPath("/c/\(["waits", "runs", "done", "failed", "cancelled"][index]).jpg"), fingerprint: Self.fingerprint(Int64(index)),
                      kind: .upload, transferID: id)
        } + [TakenFile(path: LocalPath("/c/old.jpg"), fingerprint: Self.fingerprint(9), kind: .baseline)])
        try store.start(ids[1], resumedAt: 0)
        try store.start(ids[2], resumedAt: 0)
        try store.complete(ids[2], sha256: "ab12", bytes: 100)
        try store.start(ids[3], resumedAt: 0)
        try store.fail(ids[3], reason: Reason(.sourceMissing))
        #expect(try store.remove(ids[4], by: .cancel))
        let records = try store.takenRecords(rule: "cam", paths: ["waits", "runs", "done", "failed", "cancelled", "old"].map { LocalPath("/c/\($0).jpg") })
        #expect(records[LocalPath("/c/waits.jpg")]?.upload == .waiting)
        #expect(records[LocalPath("/c/runs.jpg")]?.upload == .started)
        #expect(records[LocalPath("/c/done.jpg")]?.upload == .completed(sha256: "ab12"))
        #expect(records[LocalPath("/c/failed.jpg")]?.upload == .failed(.sourceMissing))
        #expect(records[LocalPath("/c/cancelled.jpg")]?.upload == .gone)
        #expect(records[LocalPath("/c/old.jpg")]?.upload == nil, "the baseline has no upload")

        // A row that was stopped part way keeps what the server has: no longer one to rewrite.
        try store.requeue(ids[1], reason: nil)
        try store.setUpload(ids[1], url: "http://127.0.0.1:1/files/1", expiresAt: nil)
        #expect(try store.takenRecords(rule: "cam", paths: [LocalPath("/c/runs.jpg")])[LocalPath("/c/runs.jpg")]?.upload == .started)
    }

    @Test("a new version of a file goes to its upload while that waits, never to one that started")
    func waitingUploadTakesTheNewVersion() throws {
        let (store, account) = try makeStore()
        let ids = try store.enqueue([upload(account, "/c/a.jpg", rule: "cam"), upload(account, "/c/b.jpg", rule: "cam")])
        let newer = FileFingerprint(device: 1, inode: 1, size: 120, mtimeNanoseconds: 99)
        #expect(try store.updateWaitingUpload(ids[0], fingerprint: newer, remotePath: "/Photos/2024/a.jpg"))
        let row = try #require(try store.transfer(id: ids[0]))
        #expect(row.fingerprint == newer && row.bytesTotal == 120 && row.remotePath == "/Photos/2024/a.jpg")
        try store.start(ids[1], resumedAt: 0)
        #expect(try !store.updateWaitingUpload(ids[1], fingerprint: newer, remotePath: "/Photos/b.jpg"), "the agent's row is left to the upload")
        #expect(try store.transfer(id: ids[1])?.fingerprint == nil)
    }

    @Test("why a file was taken as it was stays with the version it is about: another version of the file takes the row without it")
    func takenNoteFollowsTheVersion() throws {
        let (store, account) = try makeStore()
        let note = "taken as it was after 10 min, though it ends before the picture's end marker (a copy interrupted?): what is sent may be damaged"
        var planned = upload(account, "/c/a.jpg", rule: "cam")
        planned.takenNote = note
        let id = try store.enqueue([planned])[0]
        #expect(try store.transfer(id: id)?.takenNote == note)
        #expect(try store.updateWaitingUpload(id, fingerprint: Self.fingerprint(7), remotePath: "/Photos/a.jpg"))
        #expect(try store.transfer(id: id)?.takenNote == nil, "the whole copy saved over it needs no note")
        #expect(try store.updateWaitingUpload(id, fingerprint: Self.fingerprint(8), remotePath: "/Photos/a.jpg", takenNote: note))
        #expect(try store.transfer(id: id)?.takenNote == note)
        // Its upload on the server lost (expired, or the name taken since): the same version
        // is sent again from the start, and keeps its note.
        try store.start(id, resumedAt: 0)
        try store.restartFromZero(id, note: Reason(.uploadExpired), fingerprint: Self.fingerprint(8))
        #expect(try store.transfer(id: id)?.takenNote == note, "the same bytes go again")
        // The upload found the file changed when it started, and sends it again from the start.
        try store.restartFromZero(id, note: Reason(.sourceChanged), fingerprint: Self.fingerprint(9))
        #expect(try store.transfer(id: id)?.takenNote == nil, "the note was about the version before")

        // Local Drive: an edit saved into a downloaded file, taken though its program still had it open.
        let drive = TemporaryFolder("iu-ld")
        let file = try drive.file("report.odt", bytes: Array("first".utf8))
        let download = try store.enqueue([NewTransfer(direction: .download, origin: .manual, accountID: account.id, localPath: LocalPath(file),
                                                      remotePath: "/Docs/report.odt", tracksEdits: true)])[0]
        try store.start(download, resumedAt: 0)
        try store.recordDownloadedFile(download, sha256: "aa", bytes: 5, etag: "\"v1\"", placed: FileFingerprint.ofRegularFile(notFollowing: LocalPath(file)))
        try store.complete(download, sha256: "aa", bytes: 5)
        let tracked = try #require(try store.localDriveFile(at: LocalPath(file)))
        let open = "taken though a program still had it open for writing, unchanged for 10 min: what is sent may not be whole"
        let version = try store.queueNewVersion(of: tracked, as: Self.fingerprint(10), takenNote: open)
        let made = try store.transfer(id: version.id)
        #expect(version.isNew && made?.takenNote == open)
        let again = try store.queueNewVersion(of: tracked, as: Self.fingerprint(11))
        #expect(!again.isNew && again.id == version.id)
        #expect(try store.transfer(id: version.id)?.takenNote == nil, "the save after it was closed needs no note")
    }

    @Test("a copy waits on its original's upload: done when that completes, to be sent when it fails or its row goes")
    func copiesWaitOnTheirOriginal() throws {
        let (store, account) = try makeStore()
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        let ids = try store.enqueue(["a", "b", "c"].map { upload(account, "/c/\($0).jpg", rule: "cam") })
        try store.recordTaken(rule: "cam", ids.enumerated().map { index, id in
            TakenFile(path: LocalPath("/c/\(["a", "b", "c"][index]).jpg"), fingerprint: Self.fingerprint(Int64(index)), kind: .upload, transferID: id)
        } + ids.enumerated().map { index, id in
            TakenFile(path: LocalPath("/c/copy of \(["a", "b", "c"][index]).jpg"), fingerprint: Self.fingerprint(Int64(10 + index)), kind: .duplicate,
                      sha256: "s\(index)", waitsOn: id)
        })
        #expect(try store.hasWaitingCopies(rule: "cam"))
        #expect(try store.watchOverview(rule: "cam").lastTaken == LocalPath("/c/c.jpg"), "the last file taken, not a copy rightly skipped")
        #expect(try store.copiesToSend(rule: "cam").isEmpty, "nothing to send while the originals wait")
        let copy = try #require(try store.takenRecords(rule: "cam", paths: [LocalPath("/c/copy of a.jpg")]).values.first)
        #expect(copy.upload == .waiting, "a copy stands as the upload it waits on")

        try store.start(ids[0], resumedAt: 0)
        try store.complete(ids[0], sha256: "s0", bytes: 100)
        try store.start(ids[1], resumedAt: 0)
        try store.fail(ids[1], reason: Reason(.sourceMissing))
        #expect(try store.remove(ids[2], by: .cancel))
        #expect(try store.copiesToSend(rule: "cam") == [LocalPath("/c/copy of b.jpg"), LocalPath("/c/copy of c.jpg")])
        let done = try #require(try store.takenRecords(rule: "cam", paths: [LocalPath("/c/copy of a.jpg")]).values.first)
        #expect(done.file.waitsOn == nil && done.upload == nil, "a copy of content sent waits on nothing")
        try store.forgetTaken(rule: "cam", paths: [LocalPath("/c/copy of b.jpg"), LocalPath("/c/copy of c.jpg")])
        #expect(try !store.hasWaitingCopies(rule: "cam"))
    }

    @Test("a copy whose original's upload sent another version of the file is to be sent itself; one of the content that went is done")
    func copyOfAnotherVersion() throws {
        let (store, account) = try makeStore()
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        let id = try store.enqueue([upload(account, "/c/a.jpg", rule: "cam")])[0]
        // "a copy" was taken while a.jpg held x; a.jpg became y while its upload ran, and
        // "a again", a copy of y, was taken after that.
        try store.recordTaken(rule: "cam", [
            TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(1), kind: .upload, transferID: id),
            TakenFile(path: LocalPath("/c/a copy.jpg"), fingerprint: Self.fingerprint(2), kind: .duplicate, sha256: "x", waitsOn: id),
            TakenFile(path: LocalPath("/c/a again.jpg"), fingerprint: Self.fingerprint(3), kind: .duplicate, sha256: "y", waitsOn: id),
        ])
        try store.start(id, resumedAt: 0)
        try store.complete(id, sha256: "y", bytes: 100)
        #expect(try store.copiesToSend(rule: "cam") == [LocalPath("/c/a copy.jpg")], "x never went")
        let records = try store.takenRecords(rule: "cam", paths: [LocalPath("/c/a copy.jpg"), LocalPath("/c/a again.jpg")])
        #expect(records[LocalPath("/c/a again.jpg")]?.file.waitsOn == nil, "y went: a copy of content sent")
        #expect(records[LocalPath("/c/a copy.jpg")]?.upload == .completed(sha256: "y"))
    }

    @Test("copies of what a waiting upload's file was are forgotten when that upload takes another version, and only those")
    func copiesOfAnEarlierVersionAreForgotten() throws {
        let (store, account) = try makeStore()
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        let ids = try store.enqueue([upload(account, "/c/a.jpg", rule: "cam"), upload(account, "/c/b.jpg", rule: "cam")])
        try store.recordTaken(rule: "cam", [
            TakenFile(path: LocalPath("/c/a.jpg"), fingerprint: Self.fingerprint(1), kind: .upload, transferID: ids[0]),
            TakenFile(path: LocalPath("/c/b.jpg"), fingerprint: Self.fingerprint(2), kind: .upload, transferID: ids[1]),
            TakenFile(path: LocalPath("/c/copy of a.jpg"), fingerprint: Self.fingerprint(3), kind: .duplicate, sha256: "a", waitsOn: ids[0]),
            TakenFile(path: LocalPath("/c/copy of b.jpg"), fingerprint: Self.fingerprint(4), kind: .duplicate, sha256: "b", waitsOn: ids[1]),
        ])
        #expect(try store.forgetCopies(rule: "other", waitingOn: ids[0]).isEmpty, "another rule's records are not these")
        #expect(try store.forgetCopies(rule: "cam", waitingOn: ids[0]) == [LocalPath("/c/copy of a.jpg")])
        #expect(try store.takenRecords(rule: "cam", paths: [LocalPath("/c/copy of a.jpg")]).isEmpty, "taken again like a new file")
        #expect(try store.takenRecords(rule: "cam", paths: [LocalPath("/c/copy of b.jpg")]).count == 1)
        #expect(try store.takenRecords(rule: "cam", paths: [LocalPath("/c/a.jpg")]).count == 1, "the original's record stays")
    }

    @Test("originals kept instead of going to the trash show in the overview, with why, most recent first")
    func keptOriginals() throws {
        let (store, account) = try makeStore()
        try store.resetWatchMemory(rule: "cam", folder: LocalPath("/c"))
        let ids = try store.enqueue((0..<25).map { upload(account, "/c/\($0).jpg", rule: "cam") })
        try store.recordTaken(rule: "cam", ids.enumerated().map {
            TakenFile(path: LocalPath("/c/\($0.offset).jpg"), fingerprint: Self.fingerprint(Int64($0.offset)), kind: .upload, transferID: $0.element)
        })
        try store.markAfterUploadDone(transferID: ids[0])
        for id in ids.dropFirst() { try store.markAfterUploadDone(transferID: id, kept: "the server did not show it") }
        let overview = try store.watchOverview(rule: "cam")
        #expect(overview.keptCount == 24)
        #expect(overview.kept.count == WatchOverview.keptShown)
        #expect(overview.kept.first == KeptOriginal(path: LocalPath("/c/24.jpg"), reason: "the server did not show it"))
    }

    @Test("rows of a held rule are left out and told why; other rules, other front doors and `--now` rows go")
    func holds() throws {
        let (store, account) = try makeStore()
        let wifiAccount = try store.addAccount(name: "camera", webdavURL: "http://127.0.0.1:1/dav/c/", tusURL: "http://127.0.0.1:1/files/",
                                               username: "c", wifiOnly: true)
        try store.enqueue((0..<1000).map { upload(account, "/c/held\($0).jpg", rule: "cam") })
        let other = try store.enqueue([upload(account, "/s/scan.jpg", rule: "scans")])
        let manual = try store.enqueue([upload(account, "/c/by-hand.jpg", rule: "cam", origin: .manual)])
        let now = try store.enqueue([upload(account, "/c/now.jpg", rule: "cam")])
        try store.setIgnoreRules(now)
        // A rule's rows follow the rule, whatever the account-wide flag says.
        let ruleOnWifiAccount = try store.enqueue([upload(wifiAccount, "/p/phone.jpg", rule: "phone")])
        try store.hold(.rule("cam", account: account.id), reason: Reason(.battery, "waiting for mains power: BAT0 discharging 54 %"))
        try store.hold(.wifiFlag(account: wifiAccount.id), reason: Reason(.wifi))
        let next = try store.runnable(direction: .upload, now: nowMilliseconds(), limit: 10)
        #expect(next.map(\.id) == manual + other + now + ruleOnWifiAccount)

        let rows = try store.transfers(state: .queued)
        #expect(rows.filter { $0.reason?.code == .battery }.count == 1000)
        #expect(rows.first { $0.id == other[0] }?.reason == nil)
        #expect(rows.first { $0.id == manual[0] }?.reason == nil)
        let held = try store.watchOverview(rule: "cam").held
        #expect(held.map(\.count) == [1000] && held.first?.reason.message.contains("BAT0") == true)
    }

    @Test("mount points seen on watched folders: kept across opens (any device number), a few per folder, none for a folder no rule watches")
    func mountPoints() throws {
        let (store, _) = try makeStore()
        let card = LocalPath("/mnt/card"), other = LocalPath("/mnt/other")
        try store.rememberMountPoint(card, device: UInt64.max - 1)
        try store.rememberMountPoint(card, device: UInt64.max - 1)
        try store.rememberMountPoint(other, device: 2049)
        let again = try QueueStore(path: folder.path + "/state/queue.sqlite3")
        #expect(try again.mountPoints().sorted { $0.device < $1.device }.map { "\($0.folder.display) \($0.device)" }
                == ["/mnt/other 2049", "/mnt/card \(UInt64.max - 1)"])
        for device in 1...20 { try store.rememberMountPoint(card, device: UInt64(device)); usleep(2000) }
        let onCard = try store.mountPoints().filter { $0.folder == card }.map(\.device).sorted()
        #expect(onCard == Array(13...20).map(UInt64.init), "the devices seen there last")
        try store.keepMountPoints(of: [card])
        #expect(try Set(store.mountPoints().map(\.folder)) == [card])
    }
}
