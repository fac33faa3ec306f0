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
            let (home, paths, store) = try FolderWatcherTests.serviceHome { "[watch \"cam\"]\nfolder = \($0)/Camera\nto = /Photos\nsettle_seconds = 1\n" }
            var options = WatchService.Options(paths: paths) {}
            options.unfinishedWait = .seconds(2)
            // The service's work is done on this thread, step by step; nothing sends the rows.
            let worker = WatchWorker(options: options, inbox: try WatchInbox(), published: PublishedRules(), presence: FolderPresence())
            worker.reload()
            let run = try #require(worker.running["cam"])
            defer { run.watcher.stop() }
            try Poll.until("the rule watching") { run.watcher.status.state == .watching }
            func rows() throws -> [Transfer] {
                worker.collect()
                worker.handleBacklog()
                return try store.transfers()
            }

            // A copy interrupted and left under its name, never resumed within the wait.
            let path = home.path + "/Camera/IMG_1.jpg"
            let whole = Files.photo(1)
            try Files.write(path, Array(whole.dropLast(40)))
            try Poll.until("the photo queued as it was") { try rows().count == 1 }
            let note = try #require(try rows().first?.takenNote, "the row says nothing of how it was taken")
            #expect(note.hasPrefix("taken as it was after 2 s, though it ends ") && note.hasSuffix("(a copy interrupted?): what is sent may be damaged"),
                    "\(note)")

            // The copy made again, whole, before the row went: the row sends that, and says nothing.
            try Files.write(home.path + "/Camera/.IMG_1.jpg.part", whole)
            try Files.rename(home.path + "/Camera/.IMG_1.jpg.part", path)
            try Poll.until("the row taking the whole photo") { try rows().first?.bytesTotal == Int64(whole.count) }
            let row = try #require(try rows().first)
            #expect(try rows().count == 1, "one row for the one photo")
            #expect(row.takenNote == nil, "the note was about the cut-short copy: \(row.takenNote ?? "")")
        }
    }
}
