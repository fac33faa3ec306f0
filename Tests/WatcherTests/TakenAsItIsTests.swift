import Foundation
import Glibc
import Platform
import Queue
import Testing
import TestSupport
@testable import Watcher

extension FolderWatcherTests {
    /// Its rule's watcher is one more watcher thread of this process: the tests that count
    /// them (`WholeMachineTests`) run on their own.
    @Suite("A photo taken as it was after waiting for it to be finished")
    struct TakenAsItIs {
        @Test("its row says why it was taken as it was; a whole version saved over it before it went takes the row, and the note goes")
        func notedOnItsRow() throws {
            let home = TemporaryFolder("iu-home")
            let paths = XDGPaths(environment: ["HOME": home.path, "XDG_STATE_HOME": home.path + "/state", "XDG_DATA_HOME": home.path + "/data",
                                               "XDG_CONFIG_HOME": home.path + "/config", "XDG_RUNTIME_DIR": home.path + "/run"])
            let store = try QueueStore(path: paths.queueDatabase)
            try store.addAccount(name: "home", webdavURL: "http://127.0.0.1:1/dav/", tusURL: "http://127.0.0.1:1/files/", username: "a")
            try Files.makeFolder(home.path + "/Camera")
            try home.file("config/instant-upload/config.ini",
                          bytes: Array("[watch \"cam\"]\nfolder = \(home.path)/Camera\nto = /Photos\nsettle_seconds = 1\n".utf8))
            var options = WatchService.Options(paths: paths) {}
            options.unfinishedWait = .seconds(2)
            // The service's work is done on this thread, step by step; nothing sends the rows.
            let worker = WatchWorker(options: options, inbox: try WatchInbox(), published: PublishedRules(), presence: FolderPresence())
            worker.reload()
            let run = try #require(worker.running["cam"])
            defer { run.watcher.stop() }
            try until("the rule watching") { run.watcher.status.state == .watching }
            func rows() throws -> [Transfer] {
                worker.collect()
                worker.handleBacklog()
                return try store.transfers()
            }

            // A copy interrupted and left under its name, never resumed within the wait.
            let path = home.path + "/Camera/IMG_1.jpg"
            let whole = Files.photo(1)
            try Files.write(path, Array(whole.dropLast(40)))
            try until("the photo queued as it was") { try rows().count == 1 }
            let note = try #require(try rows().first?.takenNote, "the row says nothing of how it was taken")
            #expect(note.hasPrefix("taken as it was after 2 s, though it ends ") && note.hasSuffix("(a copy interrupted?): what is sent may be damaged"),
                    "\(note)")

            // The copy made again, whole, before the row went: the row sends that, and says nothing.
            try Files.write(home.path + "/Camera/.IMG_1.jpg.part", whole)
            try Files.rename(home.path + "/Camera/.IMG_1.jpg.part", path)
            try until("the row taking the whole photo") { try rows().first?.bytesTotal == Int64(whole.count) }
            let row = try #require(try rows().first)
            #expect(try rows().count == 1, "one row for the one photo")
            #expect(row.takenNote == nil, "the note was about the cut-short copy: \(row.takenNote ?? "")")
        }

        func until(_ what: String, timeout: Double = 30, _ condition: () throws -> Bool) throws {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                if try condition() { return }
                if Date() >= deadline { break }
                usleep(100_000)
            }
            throw TestFailure("timed out after \(Int(timeout)) s waiting for \(what)")
        }
    }
}
