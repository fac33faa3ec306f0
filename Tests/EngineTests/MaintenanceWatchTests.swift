import Foundation
import Queue
import Synchronization
import Testing
import Transport
@testable import Engine

@Suite("Asking status.php about maintenance")
struct MaintenanceWatchTests {
    /// A stand-in status.php: answers what `next` holds, counts the questions.
    final class StatusPage: Sendable {
        let next = Mutex<Result<ServerStatus?, ProtocolViolation>>(.success(nil))
        let asked = Mutex(0)
        func ask(_ account: Account) throws -> ServerStatus? {
            asked.withLock { $0 += 1 }
            return try next.withLock { $0 }.get()
        }
        func answer(maintenance: Bool) {
            next.withLock { $0 = .success(ServerStatus(kind: .nextcloud, product: "Nextcloud", version: "28", maintenance: maintenance)) }
        }
    }

    static let nextcloud = Account(id: 1, name: "home", webdavURL: "https://c/remote.php/dav/files/a/", tusURL: nil, username: "a",
                                   server: ServerProfile(kind: .nextcloud, product: "Nextcloud", baseURL: "https://c", uploadMethod: .nextcloudChunking))

    /// The verdict once the question it may have started has been answered.
    static func settled(_ watch: MaintenanceWatch, _ account: Account = nextcloud) -> MaintenanceWatch.Verdict {
        let answered = DispatchSemaphore(value: 0)
        _ = watch.verdict(for: account) { answered.signal() }
        _ = answered.wait(timeout: .now() + 0.5)
        return watch.verdict(for: account) {}
    }

    @Test("asked once before the first transfer; an open server goes, and is not asked again until a 503")
    func openServer() {
        let page = StatusPage()
        page.answer(maintenance: false)
        let watch = MaintenanceWatch(ask: page.ask)
        #expect(Self.settled(watch) == .go)
        #expect(watch.verdict(for: Self.nextcloud) {} == .go)
        #expect(page.asked.withLock { $0 } == 1)
        // A plain WebDAV account has no status page: never held, never asked.
        let plain = Account(id: 2, name: "dav", webdavURL: "https://d/", tusURL: nil, username: "a",
                            server: ServerProfile(kind: .webdav, uploadMethod: .webdavPut))
        #expect(watch.verdict(for: plain) {} == .go)
        #expect(page.asked.withLock { $0 } == 1)
    }

    @Test("in maintenance: held with the reason, asked again after the interval, released when it ends")
    func heldUntilItEnds() throws {
        let page = StatusPage()
        page.answer(maintenance: true)
        let watch = MaintenanceWatch(firstInterval: 0.2, maxInterval: 0.25, ask: page.ask)
        guard case .hold(let reason?) = Self.settled(watch) else { Issue.record("not held with a reason"); return }
        #expect(reason.code == .maintenance && reason.message.contains("Nextcloud is in maintenance mode"))
        #expect(watch.secondsUntilNextCheck.map { $0 > 0 && $0 <= 0.2 } == true)
        #expect(watch.verdict(for: Self.nextcloud) {} == .hold(reason), "not asked again before the interval")
        #expect(page.asked.withLock { $0 } == 1)
        usleep(250_000)
        #expect(Self.settled(watch) == .hold(reason), "still in maintenance")
        #expect(page.asked.withLock { $0 } == 2)
        // No answer is no news: still held.
        page.next.withLock { $0 = .failure(ProtocolViolation("unreachable")) }
        usleep(300_000)
        #expect(Self.settled(watch) == .hold(reason))
        page.answer(maintenance: false)
        usleep(300_000)
        #expect(Self.settled(watch) == .go)
        #expect(watch.takeEnded() == [1] && watch.takeEnded().isEmpty, "the rows' notes are cleared once")
    }

    @Test("a 503 makes it ask: maintenance holds the account, anything else leaves it to the backoff")
    func after503() {
        let page = StatusPage()
        page.answer(maintenance: false)
        let watch = MaintenanceWatch(ask: page.ask)
        #expect(Self.settled(watch) == .go)
        let answered = DispatchSemaphore(value: 0)
        page.answer(maintenance: true)
        watch.serverUnavailable(Self.nextcloud) { answered.signal() }
        _ = answered.wait(timeout: .now() + 5)
        guard case .hold(.some) = watch.verdict(for: Self.nextcloud, answered: {}) else { Issue.record("not held after the 503"); return }

        let other = MaintenanceWatch(ask: page.ask)
        page.answer(maintenance: false)
        other.serverUnavailable(Self.nextcloud) { answered.signal() }
        _ = answered.wait(timeout: .now() + 5)
        #expect(other.verdict(for: Self.nextcloud) {} == .go, "a 503 without maintenance is not a hold")
    }
}
