import Foundation
/// What a tus server said about itself in answer to OPTIONS.
public struct TusServerInfo: Sendable, Equatable {
    public var versions: [String]
    public var extensions: Set<String>
    public var maxSize: Int64?
    public var checksumAlgorithms: [String]

    public var supportsTermination: Bool { extensions.contains("termination") }
    public var supportsCreation: Bool { extensions.contains("creation") }

    /// The checksum algorithm this client will use, if the server offers one it has.
    public var checksumAlgorithm: ChecksumAlgorithm? {
        guard extensions.contains("checksum") else { return nil }
        for preferred in [ChecksumAlgorithm.sha256, .sha1] where checksumAlgorithms.contains(preferred.rawValue) {
            return preferred
        }
        return nil
    }
}

public enum ChecksumAlgorithm: String, Sendable {
    case sha1, sha256
}

/// Where the server stands on one upload, from HEAD.
public struct TusUploadStatus: Sendable, Equatable {
    public var offset: Int64
    public var length: Int64?
    /// `Upload-Expires`, in milliseconds since the epoch.
    public var expiresAt: Int64?
}

/// The server answered, but not with what the tus step needed. Carries the whole story
/// so the engine can decide what it means for the transfer.
public struct HTTPStatusError: Error, CustomStringConvertible, Sendable {
    public enum Step: String, Sendable {
        case discover, create, head, patch, terminate, propfind, mkcol, get, delete
        case put, move, login
    }
    public var step: Step
    public var status: Int
    public var retryAfter: String?
    /// The server's own words, trimmed to a line, when it gave any.
    public var serverMessage: String?

    public init(step: Step, response: HTTPResponse) {
        self.step = step
        self.status = response.status
        self.retryAfter = response.header("retry-after")
        let text = response.bodyText.trimmingCharacters(in: .whitespacesAndNewlines)
        let firstLine = text.split(separator: "\n").first.map(String.init) ?? ""
        self.serverMessage = firstLine.isEmpty || firstLine.hasPrefix("<") ? nil : String(firstLine.prefix(200))
    }

    public init(step: Step, status: Int, retryAfter: String? = nil, serverMessage: String? = nil) {
        self.step = step; self.status = status; self.retryAfter = retryAfter; self.serverMessage = serverMessage
    }

    public var description: String {
        "\(step.rawValue): HTTP \(status)" + (serverMessage.map { ": \($0)" } ?? "")
    }
}

/// The server's reply did not follow the protocol (a missing or impossible header).
public struct ProtocolViolation: Error, CustomStringConvertible, Sendable {
    public var message: String
    /// The server's own words that broke it, as sent (`Retry-After: inf`), when there are some.
    public var said: String?
    public init(_ message: String, said: String? = nil) { self.message = message; self.said = said }
    public var description: String { message }
}
