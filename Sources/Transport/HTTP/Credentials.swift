import Glibc

/// Who we are to the server. `description` never shows the password.
public struct Credentials: Sendable, Equatable, CustomStringConvertible {
    public var username: String
    public var password: String
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
    public var description: String { "\(username):<hidden>" }
}
