
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
        let text = response.bodyText.trimmingWhitespace()
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
