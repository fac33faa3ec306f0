import Glibc
import Platform
import Queue
import Transport

/// What the engine does with an outcome: which reason the row shows and when to try again.
public struct Classification: Sendable, Equatable {
    public var reason: Reason
    /// Seconds the server asked us to wait (`Retry-After`), for transient reasons: always
    /// finite, 0 to `RetryAfter.cap`, whatever was passed in.
    public var retryAfter: Double?
    /// Set when the transfer was started again from zero: how many times in a row.
    public var restarts: Int?
    /// The failure is about this file alone, whatever its code says: it tells nothing of
    /// whether the server can take the other files (a 409 to a PATCH: the server holds
    /// another part of this upload).
    public var concernsThisFileOnly = false

    public init(reason: Reason, retryAfter: Double? = nil, restarts: Int? = nil) {
        self.reason = reason
        self.retryAfter = retryAfter
        self.restarts = restarts
    }

    public init(reason: Reason, retryAfter: Double? = nil) {
        self.reason = reason
        self.retryAfter = retryAfter.flatMap { $0.isNaN ? nil : min(max($0, 0), Double(RetryAfter.cap)) }
    }

    public var isTransient: Bool { reason.code.isTransient }

    /// The failure says the server cannot take work (it cannot be reached, or it failed
    /// with an error of its own), not just this file: it counts towards holding the
    /// account's other files.
    public var saysServerFails: Bool {
        [.unreachable, .serverError].contains(reason.code) && !concernsThisFileOnly
    }
}

/// Turns every way a transfer can stop into a reason a person can read and act on.
public enum FailureClassifier {
    public static func classify(_ error: Error, direction: Direction = .upload, now: Int64 = nowMilliseconds()) -> Classification {
        switch error {
        case let e as TransportError: return Classification(reason: transport(e, direction: direction))
        case let e as HTTPStatusError where direction == .download && e.status == 404:
            return Classification(reason: Reason(.sourceMissing, "the file is no longer on the server (404)",
                                                 action: "discard it: `instant-upload cancel ID`"))
        case let e as HTTPStatusError: return http(e, now: now)
        case let e as ProtocolViolation: return Classification(reason: Reason(.protocol, e.message, detail: e.said))
        case let e as SystemError where direction == .download:
            // A download's own file calls fail only on this side: the folder or the disk.
            return Classification(reason: Reason(.localWrite, "the download cannot be written: \(e.description)"))
        case let e as WrongRemoteKind:
            return Classification(reason: Reason(.targetMissing, "the folder cannot be used: \(e.description)"))
        case let e as SystemError:
            switch e.errno {
            case ENOENT: return Classification(reason: Reason(.sourceMissing))
            case ENODATA: return Classification(reason: Reason(.sourceChanged)) // it ended early: changed under us
            case EACCES, EPERM: return Classification(reason: Reason(.sourceUnreadable, "the file cannot be read: \(e.reason)"))
            default: return Classification(reason: Reason(.sourceUnreadable, "\(e.reason) (\(e.operation))"))
            }
        case let e as Classified: return e.classification
        case let e as DatabaseError: return Classification(reason: database(e))
        case let e as QueueError where e.underlying != nil: return Classification(reason: database(e.underlying!))
        default: return Classification(reason: Reason(.protocol, "\(error)"))
        }
    }

    /// The queue database refused a checkpoint: the transfer waits and goes on, never fails.
    static func database(_ e: DatabaseError) -> Reason {
        Reason(e.isDiskFull ? .diskFull : .queueDatabase, detail: e.description)
    }

    static func transport(_ e: TransportError, direction: Direction) -> Reason {
        let words = FailureWords.transport(e)
        func reason(_ code: ReasonCode, action: String? = nil) -> Reason {
            Reason(code, words.sentence, action: action, detail: words.detail)
        }
        switch e.kind {
        case .unreachable: return reason(.unreachable)
        case .timeout: return reason(.timeout)
        case .connectionReset: return reason(.connectionReset)
        case .tls: return reason(.tls)
        case .sourceRead:
            if e.errno == ENODATA { return Reason(.sourceChanged) }
            return reason(.sourceUnreadable)
        case .sinkWrite: return reason(.localWrite)
        case .badURL: return reason(.protocol, action: "check the account's address with `instant-upload account list`")
        case .malformedReply: return reason(.protocol)
        case .cancelled: return Reason(.paused, "stopped")
        case .other: return reason(.connectionReset)
        }
    }

    static func http(_ e: HTTPStatusError, now: Int64) -> Classification {
        let said = e.serverMessage.map { ": \($0)" } ?? ""
        // The sentence for a status both a transfer and a command can meet comes from one place.
        let words = FailureWords.http(e, user: nil)
        // A transient answer that asks for a wait: the wait is read strictly and shown as
        // the server gave it; one no server sends makes the answer a protocol failure.
        func waiting(_ reason: Reason) -> Classification {
            guard let text = e.retryAfter else { return Classification(reason: reason) }
            do {
                let wait = try RetryAfter.parse(text, now: now)
                var shown = reason
                shown.message += "; \(wait.shown)"
                shown.detail = "Retry-After: \(text)"
                // "Retry-After: 0" (or a date gone by) names no wait: the backoff decides,
                // so a server that keeps saying it is never answered at once, again and again.
                return Classification(reason: shown, retryAfter: wait.seconds > 0 ? Double(wait.seconds) : nil)
            } catch {
                return Classification(reason: Reason(.protocol, "the server answered \(e.status) to \(e.step.rawValue), and \(error.message)\(said)",
                                                     detail: error.said))
            }
        }
        switch e.status {
        case 401:
            return Classification(reason: Reason(.auth))
        case 403:
            return Classification(reason: Reason(.rejectedByServer, words.sentence + said))
        case 404 where e.step == .patch || e.step == .head:
            return Classification(reason: Reason(.uploadLost))
        case 409 where e.step == .patch:
            var c = Classification(reason: Reason(.serverError, "the server holds a different part of the file; asking it where to continue"))
            c.concernsThisFileOnly = true
            return c
        case 404 where e.step == .get:
            return Classification(reason: Reason(.sourceMissing, "the file is no longer on the server (404)", action: "discard it: `instant-upload cancel ID`"))
        case 404, 409:
            return Classification(reason: Reason(.targetMissing, "the folder on the server does not exist (\(e.status))\(said)"))
        case 410:
            return Classification(reason: Reason(.uploadExpired))
        case 412:
            return Classification(reason: Reason(.protocol, "the server does not speak this tus version (412)"))
        case 413:
            return Classification(reason: Reason(.tooLarge, "the file is larger than the server accepts (413)\(said)"))
        case 423, 429:
            return waiting(Reason(.serverBusy, "the server is busy (\(e.status))"))
        case 460:
            return Classification(reason: Reason(.checksumMismatch))
        case 503:
            return waiting(Reason(.maintenance, "the server is in maintenance mode (503)\(said)"))
        case 507:
            return Classification(reason: Reason(.quota, "no quota left on server (507)"))
        case 500...599:
            return waiting(Reason(.serverError, words.sentence + said))
        default:
            return Classification(reason: Reason(.protocol, "the server answered \(e.status) to \(e.step.rawValue)\(said)"))
        }
    }
}

/// An error that already knows its reason (raised by the engine's own checks).
public struct Classified: Error, CustomStringConvertible {
    public var classification: Classification
    public init(_ reason: Reason, retryAfter: Double? = nil) {
        classification = Classification(reason: reason, retryAfter: retryAfter)
    }
    public var description: String { classification.reason.description }
}
