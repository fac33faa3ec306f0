import Glibc
import Platform
import Queue
import Transport

/// What the engine does with an outcome: which reason the row shows and when to try again.
public struct Classification: Sendable, Equatable {
    public var reason: Reason
    /// Seconds the server asked us to wait (`Retry-After`), for transient reasons.
    public var retryAfter: Double?

    public var isTransient: Bool { reason.code.isTransient }
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
        case let e as ProtocolViolation: return Classification(reason: Reason(.protocol, e.message))
        case let e as SystemError where direction == .download:
            // A download's own file calls fail only on this side: the folder or the disk.
            return Classification(reason: Reason(.localWrite, "the download cannot be written: \(e.description)"))
        case let e as SystemError:
            switch e.errno {
            case ENOENT: return Classification(reason: Reason(.sourceMissing))
            case EACCES, EPERM: return Classification(reason: Reason(.sourceUnreadable, "the file cannot be read: \(e.reason)"))
            default: return Classification(reason: Reason(.sourceUnreadable, "\(e.reason) (\(e.operation))"))
            }
        case let e as Classified: return e.classification
        default: return Classification(reason: Reason(.protocol, "\(error)"))
        }
    }

    static func transport(_ e: TransportError, direction: Direction) -> Reason {
        let words = FailureWords.transport(e)
        func reason(_ code: ReasonCode, action: String? = nil) -> Reason {
            Reason(code, words.sentence, action: action, detail: words.detail)
        }
        switch e.kind {
        case .unreachable: return reason(.offline, action: "it is retried by itself")
        case .timeout: return reason(.timeout)
        case .connectionReset: return reason(.connectionReset)
        case .tls: return reason(.tls)
        case .sourceRead:
            if e.errno == ENODATA { return Reason(.sourceChanged) }
            return reason(.sourceUnreadable)
        case .sinkWrite: return reason(.localWrite)
        case .badURL: return reason(.protocol, action: "check the account's address with `instant-upload account list`")
        case .cancelled: return Reason(.paused, "stopped")
        case .other: return reason(.connectionReset)
        }
    }

    static func http(_ e: HTTPStatusError, now: Int64) -> Classification {
        let said = e.serverMessage.map { ": \($0)" } ?? ""
        let retryAfter = e.retryAfter.flatMap { HTTPDate.retryAfterSeconds($0, now: now) }
        switch e.status {
        case 401:
            return Classification(reason: Reason(.auth))
        case 403:
            return Classification(reason: Reason(.rejectedByServer, "the server refused the file (403)\(said)"))
        case 404 where e.step == .patch || e.step == .head:
            return Classification(reason: Reason(.uploadLost))
        case 409 where e.step == .patch:
            return Classification(reason: Reason(.serverError, "the server holds a different part of the file; asking it where to continue"))
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
            return Classification(reason: Reason(.serverBusy, "the server is busy (\(e.status))"), retryAfter: retryAfter)
        case 460:
            return Classification(reason: Reason(.checksumMismatch))
        case 503:
            return Classification(reason: Reason(.maintenance, "the server is in maintenance mode (503)\(said)"), retryAfter: retryAfter)
        case 507:
            return Classification(reason: Reason(.quota, "no quota left on server (507)"))
        case 500...599:
            return Classification(reason: Reason(.serverError, "the server had an error (\(e.status))\(said)"), retryAfter: retryAfter)
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
