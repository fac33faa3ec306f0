import Foundation
import Glibc
import Platform
import Testing
import TestSupport
@testable import Watcher

/// The tests that need the whole machine to themselves: they lower inotify limits that
/// every inotify user of the machine shares, or count this process's watcher threads.
/// `make test` runs them on their own, after the rest (`--skip WholeMachineTests`, then
/// `--filter WholeMachineTests`), so that the other watcher tests can run side by side.
@Suite("Tests that need the whole machine: inotify limits and watcher threads", .serialized)
struct WholeMachineTests {
    @Test("an overflowing event queue is answered by a scan: nothing is missed")
    func overflow() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.root)
        // The kernel sizes an instance's queue when it is made: lower the limit only for that moment.
        let small = try SysctlOverride("fs.inotify.max_queued_events", "4")
        defer { small.restore() }
        try w.watcher.start()
        small.restore()
        try w.waitFor("the first scan") { _ in w.watcher.status.scans >= 1 }
        // The watcher's thread is held in the handler while the burst arrives, as a starved
        // one would be: far more than four events wait, so the queue overflows for certain.
        try w.holdWithAPhoto(Files.photo(1000))
        try Files.makeFolder(w.path("burst"))
        for i in 0..<300 { try Files.write(w.path(i % 2 == 0 ? "IMG_\(i).jpg" : "burst/IMG_\(i).jpg"), Files.photo(i)) }
        w.gate.open()
        try w.waitForFound(301)
        try w.scanAndSettle()
        #expect(w.watcher.status.overflows >= 1, "the test must make the queue overflow to prove anything")
        #expect(w.found.count == 301)
        #expect(Set(w.found.map(\.path)).count == 301)
    }

    @Test("out of inotify watches: reported with the sysctl to raise, new files found by periodic scans, watched again once raised")
    func outOfWatches() throws {
        let w = WatchRecorder(fallbackScan: .seconds(1))
        try Files.makeFolder(w.path("sub"))
        // The watcher must get its instance whatever the agents of tests running beside it hold.
        let room = try SysctlOverride("fs.inotify.max_user_instances", "4096")
        defer { room.restore() }
        let none = try SysctlOverride("fs.inotify.max_user_watches", "0")
        defer { none.restore() }
        try w.start()
        try w.waitForState(.scanningPeriodically)
        let trouble = try #require(w.watcher.status.troubles.first { $0.code == .outOfWatches })
        #expect(trouble.action.contains("fs.inotify.max_user_watches"))
        try Files.write(w.path("sub/while-out.jpg"), Files.photo(1))
        try w.waitForFound(1)
        #expect(w.found.first?.noticedBy == .scan)
        none.restore()
        try w.waitForState(.watching)
        #expect(w.watcher.status.troubles.isEmpty)
        try Files.write(w.path("sub/after.jpg"), Files.photo(2))
        try w.waitForFound(2)
        #expect(w.found.last?.noticedBy == .event)
    }

    @Test("no inotify instance to be had: start says so, with the sysctl to raise")
    func outOfInstances() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.root)
        let none = try SysctlOverride("fs.inotify.max_user_instances", "0")
        defer { none.restore() }
        #expect { try w.watcher.start() } throws: { error in
            none.restore()
            guard let trouble = error as? WatcherTrouble else { return false }
            return trouble.code == .outOfInstances && trouble.action.contains("fs.inotify.max_user_instances")
        }
        none.restore()
        try w.start()
        #expect(w.watcher.status.state == .watching)
    }

    @Test("an idle watcher sleeps: its thread is not woken while nothing happens")
    func idle() throws {
        // Deaf to mounts, so nothing on this machine but its own folder could wake it.
        let w = WatchRecorder(mountTable: nil)
        try Files.makeFolder(w.path("a/b"))
        try w.start()
        try w.waitFor("nothing left to do") { _ in w.watcher.status.settling == 0 }
        let thread = try #require(Self.watcherThreads().first)
        #expect(Self.watcherThreads().count == 1)
        let before = try ThreadStats.contextSwitches(thread)
        sleep(3)
        #expect(try ThreadStats.contextSwitches(thread) == before)
    }

    @Test("watching the mount table does not make the watcher spin")
    func idleWithMounts() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.root)
        try w.start()
        let thread = try #require(Self.watcherThreads().first)
        let before = try Self.cpuTicks(thread)
        sleep(3)
        // A spinning poll would use all of the 300 ticks; a wake-up for someone's mount, none.
        #expect(try Self.cpuTicks(thread) - before < 30)
    }

    @Test("a stopped watcher says nothing more; started again, it catches up by scanning")
    func stopAndStart() throws {
        let w = WatchRecorder()
        try Files.makeFolder(w.root)
        try w.start()
        w.watcher.stop()
        #expect(w.watcher.status.state == .stopped)
        #expect(Self.watcherThreads().isEmpty)
        try Files.write(w.path("while-stopped.jpg"), Files.photo(1))
        usleep(800_000)
        #expect(w.found.isEmpty)
        try w.watcher.start()
        try w.waitForFound(1)
        #expect(w.found.first?.noticedBy == .scan)
    }

    /// The threads of this process named as a watcher's thread is.
    static func watcherThreads() -> [String] {
        ThreadStats.threads().filter { $0.name == "iu-watcher" }.map(\.id)
    }

    /// User plus system CPU time of a thread, in clock ticks (fields 14 and 15 of its stat).
    static func cpuTicks(_ tid: String) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8)
        // The name in parentheses may hold spaces: count fields after its closing parenthesis.
        let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    // MARK: The agent, with a rule

    @Test("the kernel's event queue overflowing (max_queued_events lowered) loses no file")
    func agentQueueOverflow() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera"))
        try scene.session.startAgent()
        // The kernel sizes a watcher's queue when the rule starts: lowered for that moment only.
        let small = try SysctlOverride("fs.inotify.max_queued_events", "4")
        defer { small.restore() }
        try scene.addRule("Camera")
        try scene.waitWatching("camera")
        small.restore()
        // Half the files arrive while the agent is stopped, as a starved or suspended one
        // would be: far more than four events wait, so the queue overflows for certain.
        let pid = try #require(scene.session.agentPID)
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) } // harmless to an agent already going on
        var names: [String] = []
        for i in 0..<400 {
            if i == 200 { kill(pid, SIGCONT) }
            try Camera.write(scene.path("Camera/IMG_\(i).jpg"), Camera.photo(i))
            names.append("IMG_\(i).jpg")
        }
        try scene.waitUploaded(400, timeout: 300)
        try scene.expectEachOnce(names) { scene.path("Camera/" + $0) }
        let overflows = try scene.rule("camera")["overflows"] as? Int ?? 0
        #expect(overflows >= 1, "the test must make the queue overflow to prove anything; agent log: \(scene.session.agentLog.suffix(1500))")
    }

    @Test("out of inotify watches: watch list says so with the sysctl to raise")
    func agentOutOfWatches() throws {
        let scene = try InstantUploadScene()
        try Camera.makeFolder(scene.path("Camera/sub"))
        try scene.session.startAgent()
        let none = try SysctlOverride("fs.inotify.max_user_watches", "0")
        defer { none.restore() }
        try scene.addRule("Camera")
        try scene.until("rule camera scanning instead of watching", timeout: 30, every: 0.05) {
            try scene.rule("camera")["state"] as? String == "scanning_periodically"
        }
        none.restore()
        let trouble = try #require((try scene.rule("camera")["troubles"] as? [[String: Any]])?.first)
        #expect(trouble["code"] as? String == "out_of_watches")
        #expect((trouble["action"] as? String ?? "").contains("sysctl fs.inotify.max_user_watches="))
        let status = try scene.session.cli(["status"])
        #expect(status.stdout.contains("watch camera:") && status.stdout.contains("fs.inotify.max_user_watches"), "\(status.stdout)")
    }
}
