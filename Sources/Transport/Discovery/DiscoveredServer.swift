/// What discovery found at one address: enough to store with an account and to upload.
public struct DiscoveredServer: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case nextcloud, owncloud
        /// Any other server that answers PROPFIND at the address itself (Apache mod_dav, nginx, rclone).
        case webdav
    }

    /// How files go up, in the order discovery prefers them.
    public enum UploadProtocol: String, Sendable {
        /// tus 1.0 (ownCloud Infinite Scale: created by POST to the WebDAV folder).
        case tus
        /// Nextcloud chunked upload v2: numbered chunks in an upload folder, then `MOVE .file`.
        case nextcloudChunking = "nextcloud-chunking"
        /// One whole-file PUT; no resume.
        case webdavPut = "webdav-put"
    }

    /// Nextcloud, ownCloud (10 or Infinite Scale), or plain WebDAV.
    public var kind: Kind
    /// `Nextcloud`, `ownCloud`, `Infinite Scale`; nil for plain WebDAV.
    public var product: String?
    /// The server's version from status.php (digits and dots); nil for plain WebDAV.
    public var version: String?
    /// The address without a trailing slash, path prefix included (`https://host/nextcloud`).
    public var baseURL: String
    /// The account's WebDAV root, ending in `/`.
    public var webdavURL: String
    /// Nextcloud's upload folders (`remote.php/dav/uploads/<id>/`), for chunked upload.
    public var uploadsURL: String?
    /// Where tus uploads are created (for oCIS the WebDAV root itself: POST to the folder).
    public var tusURL: String?
    /// What the OCS capabilities said about uploads (Nextcloud/ownCloud only).
    public var capabilities: ServerCapabilities?
    /// The protocol uploads use: `account list` shows its raw value.
    public var uploadProtocol: UploadProtocol
    /// The user id in WebDAV paths (Nextcloud/ownCloud), which can differ from the login name.
    public var userID: String?
    /// How a whole-file PUT reaches its name without ever leaving half a file there.
    public var putPlacement: PutPlacement

    public init(kind: Kind, product: String? = nil, version: String? = nil, baseURL: String, webdavURL: String,
                uploadsURL: String? = nil, tusURL: String? = nil, capabilities: ServerCapabilities? = nil,
                uploadProtocol: UploadProtocol, userID: String? = nil, putPlacement: PutPlacement) {
        self.kind = kind; self.product = product; self.version = version; self.baseURL = baseURL
        self.webdavURL = webdavURL; self.uploadsURL = uploadsURL; self.tusURL = tusURL
        self.capabilities = capabilities; self.uploadProtocol = uploadProtocol; self.userID = userID
        self.putPlacement = putPlacement
    }
}
