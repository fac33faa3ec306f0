/// The request that would make the file found another file at its name (`412` to a
/// conditional `MOVE` or `PUT`): nothing was replaced, and the upload is still there.
public struct NameTaken: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name that is taken, absolute within the account.
    public var path: String
    public init(path: String) { self.path = path }
    public var description: String { "\(path) is taken on the server" }
}
