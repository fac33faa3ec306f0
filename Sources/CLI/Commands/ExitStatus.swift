import Transport

/// Exit statuses scripts can rely on; the README's table lists, per command, what each means.
public enum ExitStatus {
    public static let ok: Int32 = 0
    /// Something needs the person: a refused file, a failed item, a wrong password, work
    /// waiting with no agent to do it.
    public static let attention: Int32 = 1
    /// The command line was wrong: an unknown flag, command or account.
    public static let usage: Int32 = 2
    /// The environment is in the way: an unreadable database or config, another agent
    /// already running, a server that cannot be reached or is failing.
    public static let environment: Int32 = 3
    /// Stopped with Ctrl-C while it waited for the person (a browser login): nothing changed.
    public static let interrupted: Int32 = 130

    /// A server check that failed: no answer or a server error is the environment (3); an
    /// answer that says the address, the user or the password is wrong is the person's (1).
    static func of(serverError error: Error) -> Int32 {
        switch error {
        case let e as TransportError:
            switch e.kind {
            case .tls, .badURL, .malformedReply: return attention
            default: return environment
            }
        case let e as HTTPStatusError where e.status >= 500:
            return environment
        default:
            return attention
        }
    }
}
