/// Discovery could not settle on a way to talk to the server. Says what was tried and
/// what was found, in words a person can act on.
public struct DiscoveryError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        /// Neither Nextcloud/ownCloud nor a WebDAV folder at the address.
        case notRecognised = "not_recognised"
        /// Nextcloud/ownCloud in maintenance mode: nothing more can be learnt now.
        case maintenance
    }

    public var code: Code
    /// What happened and what to do, for the person.
    public var message: String
    /// One line per attempt: what was asked and what came back.
    public var tried: [String]
    /// For `maintenance`: what status.php said.
    public var status: ServerStatus?

    public init(code: Code, message: String, tried: [String] = [], status: ServerStatus? = nil) {
        self.code = code; self.message = message; self.tried = tried; self.status = status
    }

    public var description: String {
        tried.isEmpty ? message : message + " (tried: " + tried.joined(separator: "; ") + ")"
    }
}
