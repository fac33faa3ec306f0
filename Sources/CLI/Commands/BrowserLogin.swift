import Dispatch
import Engine
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
        guard let xdgOpen = ChildProcess.find("xdg-open") else { return false }
        return (try? ChildProcess(xdgOpen, [url], newSession: true)) != nil
    }
}
