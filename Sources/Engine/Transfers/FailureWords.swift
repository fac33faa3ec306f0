import Glibc
import Transport

/// The one place that turns an error into the person's words: a short sentence for the row
/// or the terminal, the library's or server's own text kept aside as `detail` (what `show`
/// prints under the sentence), and, for commands that check an address, what to try.
public struct FailureWords: Sendable, Equatable {
    /// What happened, e.g. "the connection dropped".
    public var sentence: String
    /// The raw words behind it, e.g. "Recv failure: Connection reset by peer (curl error 56)".
    public var detail: String?
    /// What the person can check, for commands run by hand (`account add`, `download`).
    public var advice: String?

    public init(_ sentence: String, detail: String? = nil, advice: String? = nil) {
        self.sentence = sentence; self.detail = detail; self.advice = advice
    }

    /// One line for a terminal: `sentence: detail; advice`.
    public var line: String {
        sentence + (detail.map { ": \($0)" } ?? "") + (advice.map { "; \($0)" } ?? "")
    }

    /// A transfer that got no HTTP answer: the link, the peer, the disk, or us.
    public static func transport(_ e: TransportError) -> FailureWords {
        let raw = e.curlCode == 0 ? nil : "\(e.message) (curl error \(e.curlCode))"
        switch e.kind {
        case .unreachable:
            if e.curlCode == Curl.couldNotResolveHost || e.curlCode == Curl.couldNotResolveProxy {
                return FailureWords("cannot find a server by that name", detail: raw,
                                    advice: "check the address and the network")
            }
            return FailureWords("cannot reach the server", detail: raw, advice: "check the address and that the server is running")
        case .timeout:
            if let seconds = e.stalledSeconds { return FailureWords("the server did not answer for \(seconds) s", detail: raw) }
            return FailureWords("the server did not answer in time", detail: raw)
        case .connectionReset:
            switch e.curlCode {
            case Curl.gotNothing: return FailureWords("the server closed the connection without answering", detail: raw)
            case Curl.partialFile: return FailureWords("the connection dropped before the whole reply arrived", detail: raw)
            default: return FailureWords("the connection dropped", detail: raw)
            }
        case .tls:
            if e.curlCode == Curl.sslConnectError { return FailureWords("a secure connection to the server could not be set up", detail: raw) }
            return FailureWords("the server's certificate could not be verified", detail: raw,
                                advice: "if the server uses a private certificate authority, give its certificate with --ca-file PATH")
        case .sourceRead:
            return FailureWords("the file cannot be read: " + fileProblem(e))
        case .sinkWrite:
            switch e.errno {
            case ENOSPC, EDQUOT: return FailureWords("the disk is full", detail: e.message)
            case EACCES, EPERM, EROFS: return FailureWords("the download folder cannot be written to", detail: e.message)
            default: return FailureWords("the download cannot be written: " + fileProblem(e), detail: e.message)
            }
        case .badURL:
            return FailureWords("the server address is not usable", detail: raw, advice: "check it")
        case .malformedReply:
            // libcurl names what it could not read ("Invalid Content-Length") but never the value;
            // without a curl code the message is ours ("the server's reply is longer than ...").
            return FailureWords("the server's reply cannot be read", detail: raw ?? e.message)
        case .cancelled:
            return FailureWords("stopped")
        case .other:
            // Without a curl code the message is already ours.
            if e.curlCode == 0 { return FailureWords(e.message) }
            return FailureWords("the connection failed", detail: raw)
        }
    }

    /// Any error met while talking to a server from a command: an HTTP status, no answer, or
    /// a reply that makes no sense. `user` names whose password was refused.
    public static func of(_ error: Error, user: String? = nil) -> FailureWords {
        switch error {
        case let e as TransportError:
            return transport(e)
        case let e as HTTPStatusError:
            return http(e, user: user)
        case let e as ProtocolViolation:
            return FailureWords(e.message)
        default:
            return FailureWords("\(error)")
        }
    }

    static func http(_ e: HTTPStatusError, user: String?) -> FailureWords {
        let said = e.serverMessage
        switch e.status {
        case 401:
            return FailureWords("the server did not accept the password" + (user.map { " for \($0)" } ?? ""),
                                advice: "check it and try again")
        case 403:
            // Sending a file, the refusal is of the file (a virus scanner, a blocked type,
            // a policy); anything else is refused access.
            let refused = [.create, .patch, .put, .move].contains(e.step) ? "the file" : "access"
            return FailureWords("the server refused \(refused) (403)", detail: said)
        case 404:
            return FailureWords("nothing there (404)", advice: "check the address")
        case 500...599:
            return FailureWords("the server had an error (\(e.status))", detail: said)
        default:
            return FailureWords("the server answered \(e.status)", detail: said)
        }
    }

    /// `strerror` text for the errno a file call met, in lower case like the rest of the sentence.
    static func fileProblem(_ e: TransportError) -> String {
        guard let code = e.errno else { return e.message }
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    /// libcurl's result codes (stable numbers of its ABI) that change the sentence.
    enum Curl {
        static let couldNotResolveProxy: Int32 = 5
        static let couldNotResolveHost: Int32 = 6
        static let partialFile: Int32 = 18
        static let sslConnectError: Int32 = 35
        static let gotNothing: Int32 = 52
    }
}
