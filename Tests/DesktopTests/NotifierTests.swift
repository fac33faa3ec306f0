import Desktop
import Foundation
import Synchronization
import Testing
import TestSupport

/// The notifier against a real session bus (`dbus-daemon`) and a recording notification server.
@Suite("Notifier")
struct NotifierTests {
    /// What the callbacks saw, from the notifier's thread.
    final class Seen: Sendable {
        let actions = Mutex<[(UInt32, String)]>([])
        let closed = Mutex<[(UInt32, Notifier.CloseReason)]>([])
    }

    @Test("without a session bus there is no notifier, and nothing breaks")
    func noBus() {
        #expect(Notifier(environment: [:]) == nil)
        #expect(Notifier(environment: ["XDG_RUNTIME_DIR": "/nonexistent"]) == nil)
    }

    @Test("a session bus without a notification server gives no notifier")
    func noServer() throws {
        let bus = try PrivateSessionBus()
        #expect(Notifier(environment: bus.environment) == nil)
    }

    @Test("Notify carries the app name, icon, summary, body, Retry action and urgency")
    func notifySends() throws {
        let bus = try PrivateSessionBus()
        let recorder = try bus.startRecorder()
        let notifier = try #require(Notifier(environment: bus.environment))
        #expect(notifier.serverName == "recorder 1.0")
        #expect(notifier.canShowActions)

        let id = try #require(notifier.notify(summary: "2 uploads need attention", body: "IMG_0042.jpg - no quota left on server",
                                              actions: [(key: "retry", label: "Retry")], urgency: .critical))
        let calls = try recorder.calls()
        #expect(calls.count == 1)
        let call = try #require(calls.first)
        #expect(call.method == "Notify")
        #expect(call.id == id)
        #expect(call.app_name == "instant-upload")
        #expect(call.replaces_id == 0)
        #expect(call.icon == "document-send")
        #expect(call.summary == "2 uploads need attention")
        #expect(call.body == "IMG_0042.jpg - no quota left on server")
        #expect(call.actions == ["retry", "Retry"])
        #expect(call.hints == .init(urgency: 2, category: nil))
        #expect(call.expire_timeout == -1)
    }

    @Test("an attention batch goes out whole: critical, transfer.error, warning icon, Retry")
    func attentionBatch() throws {
        let bus = try PrivateSessionBus()
        let recorder = try bus.startRecorder()
        let notifier = try #require(Notifier(environment: bus.environment))
        let batch = try #require(AttentionBatch([
            .init(fileName: "IMG_0042.jpg", reason: "no quota left on server"),
            .init(fileName: "IMG_0043.jpg", reason: "no quota left on server"),
            .init(fileName: "clip.mp4", reason: "the server refused the file", canRetry: false),
        ]))
        let first = try #require(notifier.notify(batch.notification))
        var replacement = batch.notification
        replacement.replacesID = first
        let second = try #require(notifier.notify(replacement))
        #expect(second == first)

        let calls = try recorder.calls()
        #expect(calls.map(\.summary) == ["3 uploads need attention", "3 uploads need attention"])
        #expect(calls[0].body == "IMG_0042.jpg - no quota left on server\nand 2 more")
        #expect(calls[0].icon == "dialog-warning")
        #expect(calls[0].actions == ["retry", "Retry"])
        #expect(calls[0].hints == .init(urgency: 2, category: "transfer.error"))
        #expect(calls[1].replaces_id == first)
    }

    @Test("clicking Retry calls back with the notification's id and the action key; closing follows")
    func actionCallback() throws {
        let bus = try PrivateSessionBus()
        let recorder = try bus.startRecorder()
        let notifier = try #require(Notifier(environment: bus.environment))
        let seen = Seen()
        notifier.onAction = { id, key in seen.actions.withLock { $0.append((id, key)) } }
        notifier.onClosed = { id, reason in seen.closed.withLock { $0.append((id, reason)) } }
        _ = try #require(notifier.notify(summary: "first", body: ""))
        let id = try #require(notifier.notify(summary: "1 upload needs attention", body: "a.jpg - no quota left on server",
                                              actions: [(key: "retry", label: "Retry")]))

        // Another application's notification: the server broadcasts its click too.
        try recorder.invoke(id: id + 100, key: "retry")
        try recorder.invoke(id: id, key: "retry")
        try waitUntil("the close after the click arrives") { seen.closed.withLock { !$0.isEmpty } }

        let actions = seen.actions.withLock { $0 }
        #expect(actions.count == 1)
        #expect(actions.first?.0 == id)
        #expect(actions.first?.1 == "retry")
        let closed = seen.closed.withLock { $0 }
        #expect(closed.count == 1)
        #expect(closed.first?.0 == id)
        #expect(closed.first?.1 == .dismissed)
    }

    @Test("a callback may call back into the notifier: Retry closes its own notification")
    func reentrantCallback() throws {
        let bus = try PrivateSessionBus()
        let recorder = try bus.startRecorder()
        let notifier = try #require(Notifier(environment: bus.environment))
        let seen = Seen()
        notifier.onAction = { [weak notifier] id, key in
            notifier?.close(id: id)
            let shown = notifier?.notify(summary: "retrying", body: "")
            seen.actions.withLock { $0.append((shown ?? 0, key)) }
        }
        let id = try #require(notifier.notify(summary: "1 upload needs attention", body: "", actions: [(key: "retry", label: "Retry")]))
        try recorder.invoke(id: id, key: "retry")
        try waitUntil("the callback has finished") { seen.actions.withLock { !$0.isEmpty } }

        let calls = try recorder.calls()
        #expect(calls.map(\.method) == ["Notify", "CloseNotification", "Notify"])
        #expect(calls[1].id == id)
        #expect(seen.actions.withLock { $0.first?.0 } == calls[2].id)
    }

    @Test("file names with markup characters reach a markup server escaped")
    func markupEscaped() throws {
        let bus = try PrivateSessionBus()
        let recorder = try bus.startRecorder(capabilities: ["actions", "body", "body-markup"])
        let notifier = try #require(Notifier(environment: bus.environment))
        let batch = try #require(AttentionBatch([.init(fileName: "Tom & Jerry <1>.jpg", reason: "no quota left on server")]))
        _ = try #require(notifier.notify(batch.notification))
        #expect(try recorder.calls().first?.body == "Tom &amp; Jerry &lt;1&gt;.jpg - no quota left on server")
        #expect(try recorder.calls().first?.summary == "1 upload needs attention")
    }

    @Test("a server without buttons gets the command to run instead, in the body")
    func noActionsServer() throws {
        let bus = try PrivateSessionBus()
        let recorder = try bus.startRecorder(capabilities: ["body"])
        let notifier = try #require(Notifier(environment: bus.environment))
        #expect(!notifier.canShowActions)
        let batch = try #require(AttentionBatch([.init(fileName: "a.jpg", reason: "no quota left on server")]))
        _ = try #require(notifier.notify(batch.notification))
        #expect(try recorder.calls().first?.body == "a.jpg - no quota left on server\nRetry with `instant-upload retry --all-failed`.")
    }

    @Test("the systemd user bus under XDG_RUNTIME_DIR is found without DBUS_SESSION_BUS_ADDRESS")
    func runtimeDirectoryBus() throws {
        let bus = try PrivateSessionBus()
        let recorder = try bus.startRecorder()
        let notifier = try #require(Notifier(environment: ["XDG_RUNTIME_DIR": bus.folder.path]))
        #expect(notifier.notify(summary: "hello", body: "") != nil)
        #expect(try recorder.calls().count == 1)
    }

    @Test("when the session bus goes away, notify says nil and nothing crashes")
    func busGoesAway() throws {
        let bus = try PrivateSessionBus()
        _ = try bus.startRecorder()
        let notifier = try #require(Notifier(environment: bus.environment))
        #expect(notifier.notify(summary: "before", body: "") != nil)
        bus.stop()
        try waitUntil("the notifier sees the bus gone") { !notifier.isConnected }
        #expect(notifier.notify(summary: "after", body: "") == nil)
        notifier.close(id: 41)
    }
}
