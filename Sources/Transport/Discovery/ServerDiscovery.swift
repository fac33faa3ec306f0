import FoundationEssentials
import Platform

/// Finds out, from the one address a person types, what kind of server is there and how to
/// upload to it.
///
/// In order: `status.php` (Nextcloud and ownCloud answer it without a login); for those, the
/// OCS capabilities and the user id (the WebDAV path uses the id, not the login name), then a
/// PROPFIND of the WebDAV root with the credentials. The upload protocol is tus where the
/// server offers it (ownCloud Infinite Scale), else Nextcloud chunked upload, else a plain
/// PUT. An address that is not Nextcloud/ownCloud but answers PROPFIND itself is a plain
/// WebDAV root, uploaded to with tus when a tus server answers at `/files/` on the same
/// host (tusd's default, as a tusd + WebDAV deployment has it), else by PUT. Anything else
/// is a `DiscoveryError` that lists what was tried.
///
/// Not Sendable: it owns an `HTTPSession`. Redirects are never followed, so credentials go
/// nowhere but the address given.
public final class ServerDiscovery {
    /// The address without query, fragment or trailing slash; a pasted WebDAV or status.php
    /// URL of a Nextcloud is cut back to the server's base.
    public let address: String
    public let session: HTTPSession

    public init(address: String, credentials: Credentials?) throws(ProtocolViolation) {
        self.address = try Self.normalize(address)
        self.session = HTTPSession(credentials: credentials)
    }

    /// What status.php says, or nil when the address is no Nextcloud/ownCloud. Cheap and
    /// needs no login: the way to see maintenance mode before sending anything.
    public func status() throws -> ServerStatus? {
        var tried: [String] = []
        return try status(tried: &tried)
    }

    /// Everything needed to store an account and upload with it. Needs the credentials for
    /// Nextcloud/ownCloud (the user id) and for plain WebDAV (the PROPFIND).
    public func discover() throws -> DiscoveredServer {
        var tried: [String] = []
        if let status = try status(tried: &tried) {
            if status.maintenance {
                throw DiscoveryError(code: .maintenance, message: "\(status.product) at \(Log.redact(url: address)) is in maintenance mode; try again when the administrator has finished",
                                     tried: tried, status: status)
            }
            return try discoverCloud(status)
        }
        return try discoverWebDAV(tried: tried)
    }

    // MARK: Nextcloud and ownCloud

    private func status(tried: inout [String]) throws -> ServerStatus? {
        let response = try session.perform(HTTPRequest(method: "GET", url: address + "/status.php",
                                                       headers: [("Accept", "application/json")]))
        guard response.status == 200 else {
            tried.append("GET status.php: HTTP \(response.status)")
            return nil
        }
        guard let status = try ServerStatus.parse(response.body) else {
            tried.append("GET status.php: not a Nextcloud or ownCloud status")
            return nil
        }
        return status
    }

    private func discoverCloud(_ status: ServerStatus) throws -> DiscoveredServer {
        let ocsHeaders = [("OCS-APIRequest", "true"), ("Accept", "application/json")]
        let capsReply = try session.perform(HTTPRequest(method: "GET", url: address + "/ocs/v1.php/cloud/capabilities?format=json",
                                                        headers: ocsHeaders))
        guard capsReply.status == 200 else { throw HTTPStatusError(step: .discover, response: capsReply) }
        let capabilities = try ServerCapabilities.parse(capsReply.body)

        let userReply = try session.perform(HTTPRequest(method: "GET", url: address + "/ocs/v1.php/cloud/user?format=json",
                                                        headers: ocsHeaders))
        guard userReply.status == 200 else { throw HTTPStatusError(step: .discover, response: userReply) }
        let userID = try Self.userID(from: userReply.body)

        let id = WebDAVPath.encode(component: userID)
        let webdav = address + "/remote.php/dav/files/\(id)/"
        try checkFolder(webdav)

        let uploadProtocol: DiscoveredServer.UploadProtocol
        if capabilities.offersTus {
            uploadProtocol = .tus
        } else if status.kind == .nextcloud && capabilities.offersChunking {
            // ownCloud 10's chunking under the same capability is an older scheme: plain PUT there.
            uploadProtocol = .nextcloudChunking
        } else {
            uploadProtocol = .webdavPut
        }
        return DiscoveredServer(kind: status.kind == .nextcloud ? .nextcloud : .owncloud, product: status.product,
                                version: status.version, baseURL: address, webdavURL: webdav,
                                uploadsURL: uploadProtocol == .nextcloudChunking ? address + "/remote.php/dav/uploads/\(id)/" : nil,
                                tusURL: uploadProtocol == .tus ? webdav : nil, capabilities: capabilities,
                                uploadProtocol: uploadProtocol, userID: userID, putPlacement: .direct)
    }

    static func userID(from bytes: [UInt8]) throws(ProtocolViolation) -> String {
        let json = try ServerJSON(bytes, source: "the server's answer about the user")
        guard let id = try json.string(["ocs", "data", "id"], maxLength: 255), !id.isEmpty else {
            throw ProtocolViolation("the server's answer about the user has no user id")
        }
        guard id != ".", id != "..", !id.contains("/"), !id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw ProtocolViolation("the server gave an impossible user id `\(ServerJSON.shown(id))`")
        }
        return id
    }

    // MARK: Plain WebDAV, with tus beside it or not

    private func discoverWebDAV(tried: [String]) throws -> DiscoveredServer {
        var tried = tried
        let root = address + "/"
        let response = try session.perform(propfind(root))
        if response.status == 401 { throw HTTPStatusError(step: .propfind, response: response) }
        guard response.status == 207, let entries = try? MultistatusParser.parse(response.body),
              entries.first?.isCollection == true else {
            tried.append("PROPFIND: HTTP \(response.status)" + (response.status == 207 ? " without a folder in it" : ""))
            if let tus = try findTus(tried: &tried) {
                throw DiscoveryError(code: .notRecognised,
                                     message: "\(Log.redact(url: address)) has a tus server at \(Log.redact(url: tus)), but no WebDAV folder at the address; give the WebDAV folder's address (the one a file manager opens), or both with --webdav URL --tus URL",
                                     tried: tried)
            }
            throw DiscoveryError(code: .notRecognised,
                                 message: "\(Log.redact(url: address)) is neither a Nextcloud or ownCloud server nor a WebDAV folder; give the address you open in the browser, or the WebDAV folder's address",
                                 tried: tried)
        }
        let placement: PutPlacement = try offersMove(root) ? .viaTemporary : .direct
        if let tus = try findTus(tried: &tried) {
            return DiscoveredServer(kind: .webdav, baseURL: address, webdavURL: root, tusURL: tus, uploadProtocol: .tus,
                                    putPlacement: placement)
        }
        return DiscoveredServer(kind: .webdav, baseURL: address, webdavURL: root, uploadProtocol: .webdavPut, putPlacement: placement)
    }

    /// tus 1.0 beside a WebDAV server on the same host, where tusd serves it by default
    /// (`/files/`); nil when nothing there speaks it with the creation extension.
    private func findTus(tried: inout [String]) throws -> String? {
        guard var parts = URLComponents(string: address) else { return nil }
        parts.percentEncodedPath = "/files/"
        guard let url = parts.string else { return nil }
        let response = try session.perform(HTTPRequest(method: "OPTIONS", url: url, headers: [("Tus-Resumable", "1.0.0")]))
        guard response.status == 200 || response.status == 204, response.header("tus-version") != nil,
              let info = try? TusReply.serverInfo(response), info.versions.contains("1.0.0"), info.supportsCreation else {
            tried.append("OPTIONS /files/: HTTP \(response.status)" + (response.header("tus-version") != nil ? " without tus 1.0 creation" : ", no tus"))
            return nil
        }
        tried.append("OPTIONS /files/: tus 1.0.0")
        return url
    }

    /// Whether the server lists MOVE among the methods it allows on the root (RFC 4918
    /// class 1 servers must support it; `Allow` says so).
    private func offersMove(_ url: String) throws -> Bool {
        let response = try session.perform(HTTPRequest(method: "OPTIONS", url: url))
        guard response.isSuccess, let allow = response.header("allow") else { return response.header("dav") != nil }
        return allow.split(separator: ",").contains { $0.trimmingBlanks().uppercased() == "MOVE" }
    }

    private func checkFolder(_ url: String) throws {
        let response = try session.perform(propfind(url))
        guard response.status == 207 else { throw HTTPStatusError(step: .propfind, response: response) }
        guard try MultistatusParser.parse(response.body).first?.isCollection == true else {
            throw ProtocolViolation("the WebDAV address \(Log.redact(url: url)) is not a folder")
        }
    }

    private func propfind(_ url: String) -> HTTPRequest {
        HTTPRequest(method: "PROPFIND", url: url,
                    headers: [("Depth", "0"), ("Content-Type", "application/xml; charset=utf-8")],
                    body: .bytes(Array("""
                        <?xml version="1.0" encoding="utf-8"?>
                        <d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>
                        """.utf8)))
    }

    // MARK: The address

    /// `https://host/nextcloud/` → `https://host/nextcloud`; a pasted
    /// `…/remote.php/dav/files/alice/`, `…/index.php/…` or `…/status.php` loses that tail.
    static func normalize(_ address: String) throws(ProtocolViolation) -> String {
        guard var parts = URLComponents(string: address.trimmingBlanks()),
              let scheme = parts.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = parts.host, !host.isEmpty else {
            throw ProtocolViolation("`\(ServerJSON.shown(address))` is not an http(s) address; give it as https://cloud.example.org")
        }
        parts.query = nil
        parts.fragment = nil
        parts.user = nil
        parts.password = nil
        var path = parts.percentEncodedPath
        for tail in ["/remote.php/", "/index.php/", "/status.php", "/ocs/"] {
            if let range = path.firstRange(of: tail) { path = String(path[..<range.lowerBound]) }
        }
        if path.hasSuffix("/remote.php") || path.hasSuffix("/index.php") { path = String(path[..<path.lastIndex(of: "/")!]) }
        while path.hasSuffix("/") { path.removeLast() }
        parts.percentEncodedPath = path
        guard let url = parts.string else { throw ProtocolViolation("`\(ServerJSON.shown(address))` is not a usable address") }
        return url
    }
}
