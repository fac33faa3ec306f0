
/// tus 1.0 behind `UploadProtocol`: the handle is the upload's URL; the chunk that reaches
/// the length completes the file, so `finish` has nothing left to do.
///
/// Two ways of creating an upload, as servers do it:
/// - `.endpoint`: one creation address (tusd, the reference server), the file's path in
///   the `path` metadata;
/// - `.inFolder`: ownCloud Infinite Scale, where the upload is created by a POST to the
///   WebDAV folder it goes into, its name in `filename`, its mtime in `X-OC-Mtime` (and
///   `mtime` metadata). Termination is not assumed there: a refused DELETE leaves the
///   upload to expire.
public final class TusUpload: UploadProtocol {
    public enum Creation: Sendable, Equatable {
        case endpoint(String)
        /// The account's WebDAV root, ending in `/`.
        case inFolder(webdavRoot: String)
    }

    public let client: TusClient
    public let creation: Creation
    /// The largest PATCH the server takes, as its capabilities said (tus has no header for it).
    public let maxChunkSize: Int64?
    public var session: HTTPSession { client.session }

    public init(endpoint: String, credentials: Credentials?) {
        creation = .endpoint(endpoint)
        client = TusClient(endpoint: endpoint, credentials: credentials)
        maxChunkSize = nil
    }

    /// Uploads created in the WebDAV folders under `webdavRoot` (ownCloud Infinite Scale),
    /// in PATCHes of at most `maxChunkSize` bytes when the server named a limit.
    public init(creatingInFoldersOf webdavRoot: String, credentials: Credentials?, maxChunkSize: Int64? = nil) {
        let root = webdavRoot.hasSuffix("/") ? webdavRoot : webdavRoot + "/"
        creation = .inFolder(webdavRoot: root)
        client = TusClient(endpoint: root, credentials: credentials)
        self.maxChunkSize = maxChunkSize
    }

    public func capabilities() throws -> UploadCapabilities {
        let info = try client.discover()
        // Without checksums a broken PATCH keeps what arrived; with them the server checks
        // the whole body first, but some servers still keep a prefix: never assume either.
        return UploadCapabilities(maxSize: info.maxSize, chunkChecksum: info.checksumAlgorithm, keepsPartialChunks: true,
                                  finalStep: .lastChunk, maxChunkSize: maxChunkSize)
    }

    public func start(_ target: UploadTarget) throws -> UploadStanding.Started {
        let created: (url: String, expiresAt: Int64?)
        switch creation {
        case .endpoint:
            let metadata = [("filename", target.name), ("filetype", target.contentType),
                            ("path", String(target.remotePath.drop(while: { $0 == "/" })))]
            created = try client.create(length: target.length, metadata: metadata)
        case .inFolder(let root):
            let parts = WebDAVPath.components(target.remotePath)
            let folder = try WebDAVPath.url(root: root, path: "/" + parts.dropLast().joined(separator: "/"), isFolder: true)
            var metadata = [("filename", target.name), ("filetype", target.contentType)]
            var headers: [(String, String)] = []
            if let mtime = target.mtime {
                metadata.append(("mtime", String(mtime)))
                headers.append(("X-OC-Mtime", String(mtime)))
            }
            created = try client.create(length: target.length, metadata: metadata, at: folder, headers: headers)
        }
        return UploadStanding.Started(handle: created.url, expiresAt: created.expiresAt)
    }

    public func status(of handle: String, confirmed: Int64) throws -> UploadStanding {
        do {
            let status = try client.status(of: handle)
            return .holds(offset: status.offset, length: status.length, expiresAt: status.expiresAt)
        } catch let e as HTTPStatusError where e.status == 404 || e.status == 410 {
            return .forgotten(expired: e.status == 410)
        }
    }

    public func send(_ body: RequestBody, to handle: String, at offset: Int64, of target: UploadTarget,
                     checksum: (ChecksumAlgorithm, String)?) throws -> UploadStanding.Confirmed {
        let result = try client.patch(url: handle, offset: offset, body: body, checksum: checksum)
        // The chunk that reaches the length made the file.
        if result.offset == target.length { madeETag = result.fileETag }
        return UploadStanding.Confirmed(offset: result.offset, expiresAt: result.expiresAt)
    }

    public func finish(_ handle: String, as target: UploadTarget, sha256: String) throws {}

    public private(set) var madeETag: String?

    public func abandon(_ handle: String) throws {
        do {
            try client.terminate(handle)
        } catch let e as HTTPStatusError where creation != .endpoint(client.endpoint) && [400, 403, 405, 412].contains(e.status) {
            // Termination is not assumed there: the server lets the upload expire by itself.
        }
    }
}
