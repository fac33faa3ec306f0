import Foundation
import Glibc
import Platform
import Synchronization
import TestSupport
@testable import Watcher

/// A watcher on a temporary folder, and everything it said, for tests to wait on.
///
/// The handler records each file it is given in `taken`, as the agent will, so a file
/// handed over twice shows up as two `found` events.
final class WatchRecorder: Sendable {
    let folder: TemporaryFolder
    let root: String
    let taken: TakenSet
    let watcher: FolderWatcher
    /// Closed, it holds the watcher's thread in the handler, away from its inotify queue.
    let gate = HandlerGate()
    /// The same, for files handed over only: closed, the watcher waits in the middle of
    /// taking what settled together.
    let foundGate = HandlerGate()
    private let log = EventLog()

    /// A watcher on `root` (default: a new temporary folder), not started yet.
    /// `mountTable` nil leaves the watcher deaf to mounts, for tests that must prove another way back.
    init(root: String? = nil, settle: Duration = .milliseconds(500), media: MediaSelection = .all, unfinishedWait: Duration = .seconds(600),
         fallbackScan: Duration = .seconds(300), mountTable: String? = "/proc/self/mountinfo", taken: TakenSet = TakenSet()) {
        folder = TemporaryFolder("iu-watch")
        let path = root ?? folder.path + "/Camera"
        self.root = path
        self.taken = taken
        let (log, gate, foundGate) = (self.log, self.gate, self.foundGate)
        let settings = WatcherSettings(folder: LocalPath(path), media: media, settleWindow: settle, unfinishedWait: unfinishedWait,
                                       fallbackScanInterval: fallbackScan, mountTable: mountTable)
        watcher = FolderWatcher(settings: settings, taken: taken) { [taken] event in
            gate.passThrough()
            if case .found = event { foundGate.passThrough() }
            if case .found(let file) = event { taken.insert(file.fingerprint, at: file.path) }
            if case .moved(let from, let to, _) = event { taken.move(from, to: to) }
            if case .exchanged(let a, let b) = event { taken.exchange(a, b) }
            log.events.withLock { $0.append(event) }
        }
    }

    deinit { watcher.stop() }

    /// Starts the watcher and waits until its first scan is done.
    func start() throws {
        try watcher.start()
        try waitFor("the first scan") { _ in watcher.status.scans >= 1 || watcher.status.state == .folderMissing }
    }

    var all: [WatchEvent] { log.events.withLock { $0 } }
    var found: [FoundFile] { all.compactMap { if case .found(let f) = $0 { f } else { nil } } }
    var foundNames: [String] { found.map { $0.path.relative(to: LocalPath(root)).text }.sorted() }
    var moves: [(LocalPath, LocalPath, Bool)] { all.compactMap { if case .moved(let a, let b, let f) = $0 { (a, b, f) } else { nil } } }
    var problems: [WatcherTrouble] { all.compactMap { if case .problem(let p) = $0 { p } else { nil } } }
    var swaps: [(LocalPath, LocalPath)] { all.compactMap { if case .exchanged(let a, let b) = $0 { (a, b) } else { nil } } }

    /// Writes a photo at each of `names` (relative) and puts it in the memory, as taken in an
    /// earlier run: `Files.photo` 1, 2, … unless `photos` names them (photos whose numbers
    /// have as many digits are of one size).
    func takenBeforeStart(_ names: [String], photos: [Int]? = nil) throws {
        for (index, name) in names.enumerated() {
            try Files.write(path(name), Files.photo(photos?[index] ?? index + 1))
            taken.insert(try FileFingerprint.of(LocalPath(path(name))), at: LocalPath(path(name)))
        }
    }

    /// Whether the memory holds the file now at `relative` as taken there.
    func isTaken(_ relative: String) throws -> Bool {
        let path = LocalPath(self.path(relative))
        return taken.status(of: try FileFingerprint.of(path), at: path) == .taken
    }

    /// Waits (generously) until `condition` holds over the events so far.
    func waitFor(_ what: String, timeout: Double = 60, _ condition: ([WatchEvent]) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if condition(all) { return }
            if Date() >= deadline { break }
            usleep(20_000)
        }
        throw TestFailure("timed out after \(Int(timeout)) s waiting for \(what); status: \(watcher.status); found: \(foundNames.prefix(20))")
    }

    func waitForFound(_ count: Int, timeout: Double = 60) throws {
        try waitFor("\(count) files found", timeout: timeout) { _ in found.count >= count }
    }

    func waitForState(_ state: WatcherStatus.State, timeout: Double = 60) throws {
        try waitFor("state \(state)", timeout: timeout) { _ in watcher.status.state == state }
    }

    /// Closes the gate, writes `photo` at first.jpg, and waits until the watcher is held in
    /// its handler by it: what happens meanwhile is read late, in one go.
    func holdWithAPhoto(_ photo: [UInt8]) throws {
        gate.close()
        try Files.write(path("first.jpg"), photo)
        try waitFor("the watcher held in its handler") { _ in gate.isHolding }
    }

    /// Asks for a full scan and waits for it, then for anything it put to settle.
    func scanAndSettle() throws {
        let before = watcher.status.scans
        watcher.scanNow()
        try waitFor("a requested scan") { _ in watcher.status.scans > before }
        try waitFor("nothing left settling") { _ in watcher.status.settling == 0 }
    }

    /// The path of `relative` inside the watched folder.
    func path(_ relative: String) -> String { root + "/" + relative }
}

/// Holds whoever passes through while closed; open by default.
final class HandlerGate: Sendable {
    private let state = Locked((closed: false, holding: false))

    func close() { state.withLock { $0.closed = true } }
    func open() { state.withLock { $0.closed = false } }

    /// True while a caller waits in `passThrough`.
    var isHolding: Bool { state.withLock { $0.holding } }

    func passThrough() {
        while state.withLock({ (s: inout (closed: Bool, holding: Bool)) -> Bool in s.holding = s.closed; return s.closed }) {
            usleep(1_000)
        }
    }
}

final class EventLog: Sendable {
    let events = Mutex<[WatchEvent]>([])
}

/// Writing files the way programs do: plain open, write, close (one `IN_CLOSE_WRITE`).
enum Files {
    static func write(_ path: String, _ bytes: [UInt8], append: Bool = false) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0o644)
        guard fd >= 0 else { throw TestFailure("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw TestFailure("cannot write \(path)")
        }
    }

    static func makeFolder(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    static func rename(_ from: String, _ to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw TestFailure("cannot rename \(from) to \(to): \(String(cString: strerror(errno)))") }
    }

    /// A distinct photo for `index` (its comment differs), taken on `date`.
    static func photo(_ index: Int, date: String = "2024:03:15 10:00:00") -> [UInt8] {
        MediaFiles.photo(date, comment: "picture \(index)")
    }
}

extension WatcherStatus: CustomStringConvertible {
    public var description: String {
        "\(state.rawValue), \(watchedFolders) folders, \(settling) settling, \(scans) scans, \(overflows) overflows, \(found) found, troubles: \(troubles.map(\.code.rawValue))"
    }
}
