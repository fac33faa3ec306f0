import CSystem
import Dispatch
import Engine
import Foundation
import Glibc
import Platform
import Queue
import Transport

/// Logging in the way Nextcloud's own desktop client does (Login Flow v2): the person
/// approves in a browser, the server hands out an app password for this program, and the
/// person's own password is never asked for, sent or kept.
///
/// The login address is printed on a line of its own and opened with `xdg-open` when a
/// display is there; the server is then asked every `pollSeconds` until the person
/// approves, the login expires on the server (20 minutes), or Ctrl-C stops the wait.
struct BrowserLogin {
    let address: String
    let account: Account
    let settings: TransferSettings
    let context: CommandContext

    static let pollSeconds = 2.0
    static let timeoutSeconds = 20.0 * 60

    enum Outcome {
        case approved(LoginFlow.Approval)
        /// The person pressed Ctrl-C: nothing was saved.
        case cancelled
        /// What went wrong, and the exit status it makes.
        case failed(String, Int32)
    }

    func run() -> Outcome {
        let flow: LoginFlow
        let pending: LoginFlow.Pending
        do {
            flow = try LoginFlow(address: address)
            settings.prepare(flow.session, for: account)
            pending = try flow.start()
        } catch {
            return .failed("the server did not start a login: \(AccountCommands.explain(error, user: "you"))", ExitStatus.of(serverError: error))
        }
        context.say("Log in to your server in a browser, at this address:")
        context.say(pending.loginURL)
        if Self.hasDisplay(context.paths.environment), Self.open(pending.loginURL) {
            context.complain("(opened in your browser)")
        }
        context.complain("waiting for you to approve the login there (Ctrl-C stops)…")

        let cancellation = CancellationFlag()
        let interrupt = Self.onInterrupt { cancellation.cancel() }
        defer { interrupt.cancel(); signal(SIGINT, SIG_DFL) }
        do {
            return .approved(try flow.waitForApproval(pending, every: Self.pollSeconds, timeout: Self.timeoutSeconds,
                                                      cancellation: cancellation))
        } catch let e as TransportError where e.kind == .cancelled || cancellation.isCancelled {
            return .cancelled
        } catch {
            if cancellation.isCancelled { return .cancelled }
            // Nobody approved in time: the person's to do again; a failing server is not.
            let status = (error as? TransportError)?.kind == .timeout ? ExitStatus.attention : ExitStatus.of(serverError: error)
            return .failed("the login did not complete: \(AccountCommands.explain(error, user: "you"))", status)
        }
    }

    static func hasDisplay(_ environment: [String: String]) -> Bool {
        !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// Ctrl-C calls `body` instead of ending the process, until the source is cancelled.
    static func onInterrupt(_ body: @escaping @Sendable () -> Void) -> DispatchSourceSignal {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler(handler: body)
        source.resume()
        return source
    }

    /// Starts `xdg-open URL` (found on PATH) in a session of its own, its output nowhere,
    /// and does not wait for it: a browser may keep running long after this command ends.
    static func open(_ url: String) -> Bool {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (0x80) | POSIX_SPAWN_SETSIGMASK (0x08): Glibc's module hides the names.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(0x80 | 0x08))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        csystem_spawn_close_from(&actions, 3)
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("xdg-open"), strdup(url), nil]
        defer { argv.forEach { free($0) } }
        return posix_spawnp(&pid, "xdg-open", &actions, &attributes, argv, environ) == 0
    }
}
