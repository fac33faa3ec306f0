import Platform

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

    /// The hidden name a `.viaTemporary` upload (`WebDAVPutUpload`) uses: `.<name>.<token>.part`,
    /// in the same folder, so an interrupted PUT never leaves half a file under the real name.
    public static func temporaryName(for name: String, token: String) -> String {
        let safeToken = String(token.unicodeScalars.filter { $0.isASCII && ($0.isAlphanumeric || $0 == "-") }.prefix(40))
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

    /// One PUT of `body` to `path`. With a `condition` the server refuses (`NameTaken`,
    /// `VersionChanged`) rather than replace a file it does not allow.
    public func put(_ body: RequestBody, to path: String, headers: [(String, String)] = [], condition: Replacing? = nil) throws -> PutResult {
        let headers = headers + (condition?.putHeaders ?? [])
        let response = try session.perform(HTTPRequest(method: "PUT", url: url(for: path), headers: headers, body: body))
        if let condition, response.status == 412 { throw condition.refusal(at: path) }
        guard response.status == 201 || response.status == 204 || response.status == 200 else {
            throw HTTPStatusError(step: .put, response: response)
        }
        return PutResult(status: response.status, mtimeAccepted: response.header("x-oc-mtime")?.lowercased() == "accepted",
                         etag: response.fileETag)
    }

    /// MOVE `source` to `destination` on this account, replacing only what `condition`
    /// allows there (`NameTaken`, `VersionChanged` otherwise); nil replaces anything.
    /// The moved file's ETag, when the reply names it.
    @discardableResult
    public func move(_ source: String, to destination: String, condition: Replacing?) throws -> String? {
        let target = try url(for: destination)
        let headers = [("Destination", target)] + (condition?.moveHeaders(destination: target) ?? [("Overwrite", "T")])
        let response = try session.perform(HTTPRequest(method: "MOVE", url: url(for: source), headers: headers))
        if let condition, response.status == 412 { throw condition.refusal(at: destination) }
        guard response.status == 201 || response.status == 204 else { throw HTTPStatusError(step: .move, response: response) }
        return response.fileETag
    }

    /// DELETE of a file (or a folder and what it holds). Nothing there is success.
    public func delete(_ path: String) throws {
        let response = try session.perform(HTTPRequest(method: "DELETE", url: url(for: path)))
        guard response.isSuccess || response.status == 404 else { throw HTTPStatusError(step: .delete, response: response) }
    }
}
