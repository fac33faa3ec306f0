/// The server has something at the path, but not the kind of thing the call needs: a
/// file where a folder was asked for, or the other way round.
public struct WrongRemoteKind: Error, CustomStringConvertible, Sendable, Equatable {
    public var path: String
    /// What the server has there.
    public var isFolder: Bool

    public init(path: String, isFolder: Bool) { self.path = path; self.isFolder = isFolder }

    public var description: String {
        isFolder ? "\(path) is a folder on the server, not a file" : "\(path) is a file on the server, not a folder"
    }
}
