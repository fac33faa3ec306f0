import FoundationEssentials

/// A whole-file WebDAV PUT behind `UploadProtocol`, for servers with neither tus nor
/// chunked upload (ownCloud 10, Apache mod_dav, nginx, `rclone serve webdav`).
///
/// Nothing survives a break, so the engine sends the file in one piece and starts it from
/// zero after any interruption. With `.viaTemporary` the handle is a hidden temporary name
/// in the target's folder (`WebDAVClient.temporaryName`), the PUT goes there and `finish`
/// MOVEs it to the real name with `Overwrite: F`, so half a file is never seen under it and
/// a file saved there meanwhile is never replaced; a temporary left by a broken PUT is
/// removed (when the PUT fails, and again before the next try). With `.direct` the handle
/// is the target itself, the PUT carries `If-None-Match: *` (or `If-Match` for a new
/// version), and `finish` has nothing to do.
///
/// Nextcloud's small files go this way too (`.direct`, `storesChecksum`), as its desktop
/// client sends them: one PUT, which Nextcloud writes to a part file of its own and renames
/// when whole. The PUT then carries the file's SHA-256 as `OC-Checksum: SHA256:<hex>`, as
/// the chunked upload's MOVE does, so the engine hashes the file before it is sent
/// (`capabilities` asks for a SHA-256 of the one chunk). Nextcloud keeps that checksum
/// without checking it, so a body streamed from the file is sealed with it (`BodySeal`).
public final class WebDAVPutUpload: UploadProtocol {
    public let dav: WebDAVClient
    public let placement: PutPlacement
    /// The PUT carries `OC-Checksum: SHA256:<hex>`, which Nextcloud and ownCloud store beside
    /// the file (and report as `oc:checksums`).
    public let storesChecksum: Bool
    public var session: HTTPSession { dav.session }

    public init(root: String, credentials: Credentials?, placement: PutPlacement, storesChecksum: Bool = false) {
        dav = WebDAVClient(root: root, credentials: credentials)
        self.placement = placement
        self.storesChecksum = storesChecksum
    }

    public func capabilities() throws -> UploadCapabilities {
        UploadCapabilities(chunkChecksum: storesChecksum ? .sha256 : nil, keepsPartialChunks: false, wholeFileOnly: true,
                           finalStep: placement == .direct ? .wholeFileSend : .finish)
    }

    public func start(_ target: UploadTarget) throws -> UploadStanding.Started {
        switch placement {
        case .direct:
            return UploadStanding.Started(handle: WebDAVPath.normalize(target.remotePath), expiresAt: nil)
        case .viaTemporary:
            let token = String(UUID().uuidString.lowercased().prefix(13))
            return UploadStanding.Started(handle: try WebDAVClient.temporaryPath(for: WebDAVPath.normalize(target.remotePath), token: token),
                                          expiresAt: nil)
        }
    }

    /// A PUT the server confirmed whole is held whole (when its file is still there, with
    /// that size); anything less is nothing: the temporary is removed and the file goes
    /// again from zero.
    public func status(of handle: String, confirmed: Int64) throws -> UploadStanding {
        if confirmed > 0 {
            let item: RemoteItem
            do { item = try dav.properties(of: handle) } catch let e as HTTPStatusError where e.status == 404 {
                return .forgotten(expired: false)
            }
            return item.size == confirmed && !item.isFolder ? .holds(offset: confirmed, length: nil, expiresAt: nil)
                                                            : .forgotten(expired: false)
        }
        if placement == .viaTemporary { try dav.delete(handle) }
        return .holds(offset: 0, length: nil, expiresAt: nil)
    }

    public func send(_ body: RequestBody, to handle: String, at offset: Int64, of target: UploadTarget,
                     checksum: (ChecksumAlgorithm, String)?) throws -> UploadStanding.Confirmed {
        guard offset == 0, body.length == target.length else {
            throw ProtocolViolation("a plain WebDAV upload goes in one piece, not from byte \(offset)")
        }
        var sha256: String?
        var body = body
        if storesChecksum {
            // The body is the whole file, so its digest is the file's.
            guard let (algorithm, base64) = checksum, algorithm == .sha256, let bytes = Data(base64Encoded: base64) else {
                throw ProtocolViolation("a PUT that stores its checksum needs the body's SHA-256")
            }
            sha256 = bytes.lowercaseHex
            // The server keeps the checksum as sent: a body read from the file as it goes
            // must match it, or never arrive whole.
            if case .file(let fd, let offset, let length, let observer, _) = body {
                body = .file(descriptor: fd, offset: offset, length: length, observer: observer, seal: BodySeal(.sha256, expecting: Array(bytes)))
            }
        }
        return try put(body, to: handle, of: target, sha256: sha256)
    }

    /// The PUT itself, with the file's SHA-256 (hex) as `OC-Checksum` where it is stored.
    private func put(_ body: RequestBody, to handle: String, of target: UploadTarget, sha256: String?) throws -> UploadStanding.Confirmed {
        var headers: [(String, String)] = [("Content-Type", "application/octet-stream")]
        // Nextcloud and ownCloud set the file's mtime from it; others ignore it.
        if let mtime = target.mtime { headers.append(("X-OC-Mtime", String(mtime))) }
        if let sha256 { headers.append(("OC-Checksum", "SHA256:" + sha256)) }
        do {
            lastPut = try dav.put(body, to: handle, headers: headers, condition: placement == .direct ? target.replacing : nil)
            // A temporary's ETag is not the file's: its MOVE names that.
            madeETag = placement == .direct ? lastPut?.etag : nil
        } catch {
            // Best effort: the next try removes it too, and cancel does.
            if placement == .viaTemporary, !session.cancellation.isCancelled { try? dav.delete(handle) }
            throw error
        }
        return UploadStanding.Confirmed(offset: body.length, expiresAt: nil)
    }

    /// What the server said to the last PUT (mtime accepted or not), for the log.
    public private(set) var lastPut: WebDAVClient.PutResult?

    public private(set) var madeETag: String?

    public func finish(_ handle: String, as target: UploadTarget, sha256: String) throws {
        // An empty file has no chunk to send: its one PUT (of nothing) is made here, straight
        // to the target's name when there is no temporary (which may have changed since).
        if target.length == 0 {
            let to = placement == .direct ? WebDAVPath.normalize(target.remotePath) : handle
            _ = try put(.bytes([]), to: to, of: target, sha256: storesChecksum ? sha256 : nil)
        }
        guard placement == .viaTemporary else { return }
        madeETag = try dav.move(handle, to: target.remotePath, condition: target.replacing)
    }

    public func abandon(_ handle: String) throws {
        if placement == .viaTemporary { try dav.delete(handle) }
    }
}
