/// The request that would replace a file with its new version found another version there
/// (`412` to `If-Match` or a tagged `If`): someone changed it on the server meanwhile.
public struct VersionChanged: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    /// The version the upload was to replace.
    public var etag: String
    public init(path: String, etag: String) { self.path = path; self.etag = etag }
    public var description: String { "\(path) on the server is no longer the version \(etag)" }
}
