import Foundation

/// A file or folder on the server, as a PROPFIND described it.
public struct RemoteItem: Sendable, Equatable {
    /// Absolute within the account, decoded: `/Photos/IMG 1.jpg`; the root is `/`.
    public var path: String
    /// The last path component (empty for the root).
    public var name: String
    public var isFolder: Bool
    /// `getcontentlength`; servers usually give none for folders.
    public var size: Int64?
    /// In the form an `ETag` header carries it, quotes included (`"abc"`), whatever form
    /// `getetag` had, so it can go into `If-Range` and compare with a GET's `ETag`.
    public var etag: String?
    public var lastModified: Date?
    public var contentType: String?
    /// The server's checksum of the content, `ALGORITHM:hex`, preferring SHA-256
    /// (`{http://owncloud.org/ns}checksums`).
    public var checksum: String?
    /// For folders, when the server reports it.
    public var quota: Quota?

    public init(path: String, isFolder: Bool, size: Int64? = nil, etag: String? = nil, lastModified: Date? = nil,
                contentType: String? = nil, checksum: String? = nil, quota: Quota? = nil) {
        self.path = path
        self.name = path.split(separator: "/").last.map(String.init) ?? ""
        self.isFolder = isFolder; self.size = size; self.etag = etag; self.lastModified = lastModified
        self.contentType = contentType; self.checksum = checksum; self.quota = quota
    }

    /// The SHA-256 in `checksum` as lower-case hex, when that is what the server gave.
    public var sha256: String? {
        guard let checksum, let colon = checksum.firstIndex(of: ":"),
              checksum[..<colon].uppercased() == "SHA256" else { return nil }
        return checksum[checksum.index(after: colon)...].lowercased()
    }

    /// Builds an item from one multistatus response whose href was already resolved to `path`.
    init(path: String, response: MultistatusParser.Response) {
        typealias P = MultistatusParser.PropertyName
        let isFolder = response.isCollection
        self.init(path: path, isFolder: isFolder,
                  size: response[P.contentLength].flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil },
                  etag: response[P.etag].flatMap(Self.headerForm(etag:)),
                  lastModified: response[P.lastModified].flatMap(WebDAVDate.parse),
                  contentType: response[P.contentType].flatMap { $0.isEmpty ? nil : $0 },
                  checksum: Self.preferredChecksum(response.checksums),
                  quota: Quota(available: response[P.quotaAvailable], used: response[P.quotaUsed]))
    }

    /// `abc` → `"abc"`; `"abc"` and `W/"abc"` stay as they are; empty → nil.
    /// (wsgidav's `getetag` has no quotes while its `ETag` header has them; Nextcloud quotes both.)
    static func headerForm(etag: String) -> String? {
        let trimmed = etag.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return nil }
        if trimmed.hasPrefix("\"") || trimmed.hasPrefix("W/\"") { return trimmed }
        return "\"" + trimmed + "\""
    }

    static func preferredChecksum(_ checksums: [String]) -> String? {
        for algorithm in ["SHA256", "SHA1", "MD5"] {
            if let found = checksums.first(where: { $0.uppercased().hasPrefix(algorithm + ":") }) { return found }
        }
        return checksums.first
    }
}
