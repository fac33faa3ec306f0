
/// The server's reply did not follow the protocol (a missing or impossible header).
public struct ProtocolViolation: Error, CustomStringConvertible, Sendable {
    public var message: String
    /// The server's own words that broke it, as sent (`Retry-After: inf`), when there are some.
    public var said: String?
    public init(_ message: String, said: String? = nil) { self.message = message; self.said = said }
    public var description: String { message }
}
