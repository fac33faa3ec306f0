
/// Nextcloud's chunked upload v2 behind `UploadProtocol`: the handle is the upload folder's
/// name under the account's uploads URL; chunks are numbered from 1 and kept whole or not
/// at all; `finish` is the `MOVE .file` that makes the file.
///
/// Where the server stands is read from the folder itself (PROPFIND, Depth 1): the chunks
/// held from 1 on without a gap are kept (a chunk under the minimum can only be the last);
/// anything after a gap is removed so that the assembly never meets a stale chunk, and is
/// sent again. A folder the server no longer has (expired, 404) is a forgotten upload.
public final class NextcloudUpload: UploadProtocol {
    public let client: NextcloudChunkedUpload
    public var session: HTTPSession { client.session }
    /// The smallest chunk sent but the last.
    public let minimumChunkSize: Int64
    /// Per upload folder: the number of the next chunk and the offset it starts at, from
    /// the last thing the server said about it.
    private var next: [String: (number: Int, offset: Int64)] = [:]

    public init(uploadsURL: String, webdavURL: String, credentials: Credentials?,
                minimumChunkSize: Int64 = NextcloudChunkedUpload.minimumChunkSize) {
        client = NextcloudChunkedUpload(uploadsURL: uploadsURL, webdavURL: webdavURL, credentials: credentials)
        self.minimumChunkSize = minimumChunkSize
    }

    public func capabilities() throws -> UploadCapabilities {
        UploadCapabilities(keepsPartialChunks: false, finalStep: .finish, minChunkSize: minimumChunkSize,
                           maxChunkSize: NextcloudChunkedUpload.maximumChunkSize,
                           maxChunkCount: Int64(NextcloudChunkedUpload.maximumChunkCount))
    }

    public func start(_ target: UploadTarget) throws -> UploadStanding.Started {
        let transfer = NextcloudChunkedUpload.newTransferName()
        try client.createFolder(transfer, destination: target.remotePath, totalLength: target.length)
        next[transfer] = (1, 0)
        // Nextcloud names no expiry; it removes folders untouched for a day.
        return UploadStanding.Started(handle: transfer, expiresAt: nil)
    }

    public func status(of handle: String, confirmed: Int64) throws -> UploadStanding {
        let held: [NextcloudChunkedUpload.HeldChunk]
        do {
            held = try client.heldChunks(handle)
        } catch let e as HTTPStatusError where e.status == 404 {
            next[handle] = nil
            return .forgotten(expired: false)
        }
        let kept = Self.usablePrefix(held, minimum: minimumChunkSize)
        // Fewer than `confirmed` is the server's word too (restored from a backup): the
        // upload policy goes back to it.
        let offset = kept.reduce(Int64(0)) { $0 + $1.size }
        for stale in held.dropFirst(kept.count) {
            try client.deleteChunk(handle, number: stale.number)
        }
        next[handle] = (kept.count + 1, offset)
        return .holds(offset: offset, length: nil, expiresAt: nil)
    }

    /// The chunks that can stay: 1, 2, 3... without a gap, stopping after one under the
    /// minimum (only the file's last chunk may be that short).
    static func usablePrefix(_ held: [NextcloudChunkedUpload.HeldChunk], minimum: Int64) -> [NextcloudChunkedUpload.HeldChunk] {
        var kept: [NextcloudChunkedUpload.HeldChunk] = []
        for chunk in held {
            guard chunk.number == kept.count + 1, chunk.size > 0 else { break }
            kept.append(chunk)
            if chunk.size < minimum { break }
        }
        return kept
    }

    public func send(_ body: RequestBody, to handle: String, at offset: Int64, of target: UploadTarget,
                     checksum: (ChecksumAlgorithm, String)?) throws -> UploadStanding.Confirmed {
        if next[handle]?.offset != offset {
            // Not asked in this run: the server's folder says which number comes next.
            if case .forgotten = try status(of: handle, confirmed: 0) {
                // As a chunk PUT into a missing folder is told: the engine asks again.
                throw HTTPStatusError(step: .put, status: 404, serverMessage: "the upload folder is gone")
            }
        }
        guard let position = next[handle], position.offset == offset else {
            throw ProtocolViolation("a chunk from byte \(offset) does not follow the \(next[handle]?.offset ?? 0) bytes the server holds")
        }
        try client.putChunk(handle, number: position.number, body: body, destination: target.remotePath, totalLength: target.length)
        let end = offset + body.length
        next[handle] = (position.number + 1, end)
        return UploadStanding.Confirmed(offset: end, expiresAt: nil)
    }

    public func finish(_ handle: String, as target: UploadTarget, sha256: String) throws {
        if target.length == 0 {
            // Nothing to chunk (the assembly needs at least one): an empty file is one PUT.
            madeETag = try putEmptyFile(target, sha256: sha256)
            try? client.delete(handle)
            next[handle] = nil
            return
        }
        let assembly = try client.assemble(handle, destination: target.remotePath, totalLength: target.length,
                                           mtime: target.mtime, sha256: sha256, replacing: target.replacing)
        next[handle] = nil
        lastAssembly = assembly
        madeETag = assembly.etag
    }

    /// The empty file's ETag, when the reply names it.
    private func putEmptyFile(_ target: UploadTarget, sha256: String) throws -> String? {
        var headers = [("Content-Type", "application/octet-stream"), ("OC-Checksum", "SHA256:" + sha256.lowercased())]
        if let mtime = target.mtime { headers.append(("X-OC-Mtime", String(mtime))) }
        // Only over what the target allows: the server refuses (412) instead of replacing.
        headers += target.replacing.putHeaders
        let url = try WebDAVPath.url(root: client.webdavURL, path: target.remotePath, isFolder: false)
        let response = try session.perform(HTTPRequest(method: "PUT", url: url, headers: headers, body: .bytes([])))
        if response.status == 412 { throw target.replacing.refusal(at: target.remotePath) }
        guard [200, 201, 204].contains(response.status) else { throw HTTPStatusError(step: .put, response: response) }
        return response.fileETag
    }

    /// What the server said when it last made a file (mtime accepted or not), for the log.
    public private(set) var lastAssembly: NextcloudChunkedUpload.Assembly?

    public private(set) var madeETag: String?

    public func abandon(_ handle: String) throws {
        next[handle] = nil
        try client.delete(handle)
    }
}
