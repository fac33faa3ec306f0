import Foundation

extension WebDAVClient {
    /// What the server said about a whole-file upload.
    public struct PutResult: Sendable, Equatable {
        /// 201 (a new file) or 204/200 (a file was replaced).
        public var status: Int
        /// The server set the file's mtime from `X-OC-Mtime` (Nextcloud and ownCloud answer
        /// `X-OC-MTime: accepted`; Apache mod_dav and Debian 12's rclone ignore the header).
        public var mtimeAccepted: Bool
        public var etag: String?
    }

    /// Uploads `length` bytes of `descriptor` (from its start) as `path` in one PUT, streamed
    /// from the file in bounded buffers: memory does not grow with the file.
    ///
    /// With `.viaTemporary` the bytes go to a hidden name in the same folder
    /// (`temporaryName(for:token:)`), which is then MOVEd over `path`, so an interruption
    /// never leaves half a file under the real name; a temporary left by an interrupted try
    /// is overwritten by the next one and removed when this one fails. `token` must be the
    /// same for every try of one transfer (the row's id will do). `mtime` (seconds since
    /// the epoch) is sent as `X-OC-Mtime` where servers honour it, and `sha256` (hex) as
    /// `OC-Checksum` (Nextcloud and ownCloud store it). A missing folder is an
    /// `HTTPStatusError` with step `.put`, status 409 (Nextcloud, Apache, wsgidav) or 404
    /// (rclone, Go's WebDAV handler): folders are not created here.
    public func upload(descriptor: Int32, length: Int64, to path: String, placement: PutPlacement, token: String,
                       mtime: Int64? = nil, sha256: String? = nil, observer: ByteObserver? = nil) throws -> PutResult {
        let target = WebDAVPath.normalize(path)
        var headers: [(String, String)] = [("Content-Type", "application/octet-stream")]
        if let mtime { headers.append(("X-OC-Mtime", String(mtime))) }
        if let sha256 { headers.append(("OC-Checksum", "SHA256:" + sha256.lowercased())) }
        let body = RequestBody.file(descriptor: descriptor, offset: 0, length: length, observer: observer)
        switch placement {
        case .direct:
            return try put(body, to: target, headers: headers)
        case .viaTemporary:
            let temporary = try Self.temporaryPath(for: target, token: token)
            let sent: PutResult
            do {
                sent = try put(body, to: temporary, headers: headers)
                try move(temporary, to: target, overwrite: true)
            } catch {
                // Best effort: the next try overwrites it anyway, and `removeTemporary` is there for cancel.
                if !session.cancellation.isCancelled { try? delete(temporary) }
                throw error
            }
            return sent
        }
    }

    /// Removes the temporary file an interrupted `.viaTemporary` upload of `path` may have
    /// left (nothing there is fine).
    public func removeTemporary(for path: String, token: String) throws {
        try delete(try Self.temporaryPath(for: WebDAVPath.normalize(path), token: token))
    }

    /// The hidden name a `.viaTemporary` upload uses: `.<name>.<token>.part`, in the same folder.
    public static func temporaryName(for name: String, token: String) -> String {
        let safeToken = String(token.unicodeScalars.filter { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-") }.prefix(40))
        // Keep the whole name within the usual 255-byte limit: shorten a long name's middle.
        var base = name
        while base.utf8.count > 200 { base.remove(at: base.index(base.startIndex, offsetBy: base.count / 2)) }
        return ".\(base).\(safeToken.isEmpty ? "upload" : safeToken).part"
    }

    static func temporaryPath(for target: String, token: String) throws(ProtocolViolation) -> String {
        var parts = WebDAVPath.components(target)
        guard let name = parts.popLast() else { throw ProtocolViolation("cannot upload to the account's root folder itself") }
        return "/" + (parts + [temporaryName(for: name, token: token)]).joined(separator: "/")
    }

    // MARK: Single requests

    /// One PUT of `body` to `path`.
    public func put(_ body: RequestBody, to path: String, headers: [(String, String)] = []) throws -> PutResult {
        let response = try session.perform(HTTPRequest(method: "PUT", url: url(for: path), headers: headers, body: body))
        guard response.status == 201 || response.status == 204 || response.status == 200 else {
            throw HTTPStatusError(step: .put, response: response)
        }
        return PutResult(status: response.status, mtimeAccepted: response.header("x-oc-mtime")?.lowercased() == "accepted",
                         etag: response.header("oc-etag") ?? response.header("etag"))
    }

    /// MOVE `source` to `destination` on this account (`Overwrite: T` replaces a file there).
    public func move(_ source: String, to destination: String, overwrite: Bool) throws {
        let response = try session.perform(HTTPRequest(method: "MOVE", url: url(for: source), headers: [
            ("Destination", try url(for: destination)), ("Overwrite", overwrite ? "T" : "F"),
        ]))
        guard response.status == 201 || response.status == 204 else { throw HTTPStatusError(step: .move, response: response) }
    }

    /// DELETE of a file (or a folder and what it holds). Nothing there is success.
    public func delete(_ path: String) throws {
        let response = try session.perform(HTTPRequest(method: "DELETE", url: url(for: path)))
        guard response.isSuccess || response.status == 404 else { throw HTTPStatusError(step: .delete, response: response) }
    }
}
