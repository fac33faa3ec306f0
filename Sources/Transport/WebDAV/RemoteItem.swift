import FoundationEssentials
import Platform

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
    /// What `If-Range` may carry to resume a download of this very version: the ETag when
    /// it is strong, else `Last-Modified` (IMF-fixdate), else nil, and a resume must not be
    /// attempted (a weak ETag says "equivalent", not "the same bytes").
    public var rangeValidator: String?

    public init(path: String, isFolder: Bool, size: Int64? = nil, etag: String? = nil, lastModified: Date? = nil,
                contentType: String? = nil, checksum: String? = nil, quota: Quota? = nil) {
        self.path = path
        self.name = path.split(separator: "/").last.map(String.init) ?? ""
        self.isFolder = isFolder; self.size = size; self.etag = etag; self.lastModified = lastModified
        self.contentType = contentType; self.checksum = checksum; self.quota = quota
        if let etag, etag.hasPrefix("\"") {
            rangeValidator = etag
        } else if let lastModified {
            rangeValidator = HTTPDate.format(milliseconds: Int64(saturating: lastModified.timeIntervalSince1970 * 1000))
        }
    }

    /// The SHA-256 in `checksum` as lower-case hex, when that is what the server gave.
    public var sha256: String? {
        guard let checksum, let colon = checksum.firstIndex(of: ":"),
              checksum[..<colon].uppercased() == "SHA256" else { return nil }
        return checksum[checksum.index(after: colon)...].lowercased()
    }

    /// Builds an item from one multistatus response whose href was already resolved to `path`.
    /// Sizes and quotas go through `ServerNumber`; an empty element means "not given". A
    /// `getlastmodified` that is not an HTTP date is left out: it only ever serves as a
    /// validator, and without one a download restarts instead of resuming.
    init(path: String, response: MultistatusParser.Response) throws(ProtocolViolation) {
        typealias P = MultistatusParser.PropertyName
        let isFolder = response.isCollection
        let size = try response[P.contentLength].flatMap { $0.isEmpty ? nil : $0 }
            .map { text throws(ProtocolViolation) in try ServerNumber.parse(text, field: "getcontentlength") }
        self.init(path: path, isFolder: isFolder, size: size,
                  etag: response[P.etag].flatMap(Self.headerForm(etag:)),
                  lastModified: response[P.lastModified].flatMap { HTTPDate.milliseconds($0) }
                      .map { Date(timeIntervalSince1970: Double($0 / 1000)) },
                  contentType: response[P.contentType].flatMap { $0.isEmpty ? nil : $0 },
                  checksum: Self.preferredChecksum(response.checksums),
                  quota: try Quota(available: response[P.quotaAvailable], used: response[P.quotaUsed]))
    }

    /// `abc` → `"abc"`; `"abc"` and `W/"abc"` stay as they are; empty → nil.
    /// (wsgidav's `getetag` has no quotes while its `ETag` header has them; Nextcloud quotes both.)
    static func headerForm(etag: String) -> String? {
        let trimmed = etag.trimmingBlanks()
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
