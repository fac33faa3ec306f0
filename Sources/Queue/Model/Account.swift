/// A server account as the queue knows it. The password is never here.
public struct Account: Sendable, Equatable, Codable {
    public var id: Int64
    public var name: String
    /// The account's WebDAV root, ending in `/`: folders are listed and made there.
    public var webdavURL: String
    /// Where tus uploads are created; nil when the server's uploads go another way.
    public var tusURL: String?
    public var username: String
    public var wifiOnly: Bool
    public var createdAt: Int64
    /// A CA bundle trusted for this account's server (a private certificate authority).
    public var caFile: String?
    /// What the server is and how files go up to it, as found when the account was added.
    public var server: ServerProfile

    public init(id: Int64, name: String, webdavURL: String, tusURL: String?, username: String, wifiOnly: Bool = false,
                createdAt: Int64 = 0, caFile: String? = nil, server: ServerProfile = ServerProfile()) {
        self.id = id; self.name = name; self.webdavURL = webdavURL; self.tusURL = tusURL; self.username = username
        self.wifiOnly = wifiOnly; self.createdAt = createdAt; self.caFile = caFile; self.server = server
    }

    /// Every address the account's requests go to.
    public var addresses: [String] {
        [webdavURL] + [tusURL, server.uploadsURL, server.baseURL].compactMap { $0 }
    }

    /// True when every address points at this machine (loopback): no network is needed.
    public var isOnThisMachine: Bool { addresses.allSatisfy(Self.isLoopback) }

    /// True when the URL's host is this machine (`localhost`, 127.x.x.x, `[::1]`).
    public static func isLoopback(_ url: String) -> Bool {
        guard let start = url.firstRange(of: "://") else { return false }
        var host = url[start.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
        if host.hasPrefix("[") { return host.hasPrefix("[::1]") }
        let name = (host.split(separator: ":").first.map(String.init) ?? "").lowercased()
        // 127.x.x.x as digits only: `127.example.org` is a name anyone can point anywhere.
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return name == "localhost" || (parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil })
    }
}

/// What an account's server is and how files go up to it: found by discovery when the
/// account is added (or given by the person with `--webdav` and `--tus`), and read by the
/// agent to choose the upload protocol.
public struct ServerProfile: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case nextcloud
        /// ownCloud 10 or ownCloud Infinite Scale.
        case owncloud
        /// Any other WebDAV server (Apache, nginx, rclone; tusd beside one).
        case webdav
    }

    /// How files go up: the names `account list` shows.
    public enum UploadMethod: String, Sendable, Codable, CaseIterable {
        case tus
        case nextcloudChunking = "nextcloud-chunking"
        case webdavPut = "webdav-put"
    }

    public var kind: Kind
    /// As the server names itself (`Nextcloud`, `Infinite Scale`); nil for plain WebDAV.
    public var product: String?
    public var version: String?
    /// The address status.php lives under (Nextcloud and ownCloud), without a trailing slash.
    public var baseURL: String?
    public var uploadMethod: UploadMethod
    /// Nextcloud's upload folders (`remote.php/dav/uploads/<id>/`), for chunked upload.
    public var uploadsURL: String?
    /// The user id in WebDAV paths, which can differ from the login name.
    public var userID: String?
    /// A whole-file PUT goes to a temporary name and is then moved over the real one.
    public var putViaTemporary: Bool
    /// The largest chunk the server takes, where it says so (oCIS: `max_chunk_size`).
    public var maxChunkSize: Int64?

    public init(kind: Kind = .webdav, product: String? = nil, version: String? = nil, baseURL: String? = nil,
                uploadMethod: UploadMethod = .tus, uploadsURL: String? = nil, userID: String? = nil, putViaTemporary: Bool = false,
                maxChunkSize: Int64? = nil) {
        self.kind = kind; self.product = product; self.version = version; self.baseURL = baseURL
        self.uploadMethod = uploadMethod; self.uploadsURL = uploadsURL; self.userID = userID
        self.putViaTemporary = putViaTemporary; self.maxChunkSize = maxChunkSize
    }

    /// True for Nextcloud and ownCloud, whose status.php tells maintenance mode.
    public var hasStatusPage: Bool { kind != .webdav && baseURL != nil }

    /// ownCloud Infinite Scale: tus uploads are created in the WebDAV folder they go to.
    public var createsTusInFolders: Bool { kind == .owncloud && uploadMethod == .tus }
}
