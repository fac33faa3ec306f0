import FoundationEssentials
import Platform

/// A tus 1.0 client for one server endpoint: discovery, creation, offset, PATCH, termination.
///
/// Each call is one HTTP exchange; the policy (when to HEAD, when to start over) lives in
/// the engine, which sees every outcome. Not Sendable: it owns an `HTTPSession`.
public final class TusClient {
    public let endpoint: String
    public let session: HTTPSession

    public init(endpoint: String, credentials: Credentials?) {
        self.endpoint = endpoint
        self.session = HTTPSession(credentials: credentials)
    }

    static let version = "1.0.0"

    public func discover() throws -> TusServerInfo {
        let response = try session.perform(HTTPRequest(method: "OPTIONS", url: endpoint))
        guard response.status == 200 || response.status == 204 else { throw HTTPStatusError(step: .discover, response: response) }
        guard response.header("tus-version") != nil else {
            throw ProtocolViolation("\(Log.redact(url: endpoint)) is not a tus server (no Tus-Version header)")
        }
        return try TusReply.serverInfo(response)
    }

    /// Creates an upload and returns its URL (resolved against the endpoint, same origin only).
    /// `url` is where to POST when it is not the endpoint (oCIS: the folder the file goes into).
    public func create(length: Int64, metadata: [(String, String)], at url: String? = nil,
                       headers extra: [(String, String)] = []) throws -> (url: String, expiresAt: Int64?) {
        let encoded = metadata.map { key, value in "\(key) \(Data(value.utf8).base64EncodedString())" }.joined(separator: ",")
        let response = try session.perform(HTTPRequest(method: "POST", url: url ?? endpoint, headers: [
            ("Tus-Resumable", Self.version), ("Upload-Length", String(length)), ("Upload-Metadata", encoded),
        ] + extra))
        guard response.status == 201 else { throw HTTPStatusError(step: .create, response: response) }
        guard let location = response.header("location"), !location.isEmpty else {
            throw ProtocolViolation("the server created an upload but did not say where (no Location header)")
        }
        return (try resolve(location), try TusReply.expiresAt(response))
    }

    /// Asks where the server stands on an upload.
    public func status(of url: String) throws -> TusUploadStatus {
        let response = try session.perform(HTTPRequest(method: "HEAD", url: url, headers: [("Tus-Resumable", Self.version)]))
        guard response.status == 200 || response.status == 204 else { throw HTTPStatusError(step: .head, response: response) }
        return try TusReply.uploadStatus(response)
    }

    /// Sends `length` bytes of `descriptor` from `offset` in one PATCH and returns the
    /// offset the server confirms. `checksum` is `(algorithm, base64 digest)` of these bytes.
    public func patch(url: String, descriptor: Int32, offset: Int64, length: Int64, observer: ByteObserver?,
                      checksum: (ChecksumAlgorithm, String)? = nil) throws -> PatchReply {
        try patch(url: url, offset: offset, body: .file(descriptor: descriptor, offset: offset, length: length, observer: observer),
                  checksum: checksum)
    }

    /// Sends a chunk already in memory (read once to checksum it) in one PATCH.
    public func patch(url: String, offset: Int64, bytes: UnsafeRawBufferPointer, observer: ByteObserver?,
                      checksum: (ChecksumAlgorithm, String)? = nil) throws -> PatchReply {
        try patch(url: url, offset: offset, body: .buffer(bytes, observer: observer), checksum: checksum)
    }

    /// What a PATCH's reply says: the offset confirmed, the upload's expiry, and the file's
    /// ETag when it names one (for the chunk that makes the file).
    public typealias PatchReply = (offset: Int64, expiresAt: Int64?, fileETag: String?)

    func patch(url: String, offset: Int64, body: RequestBody, checksum: (ChecksumAlgorithm, String)?) throws -> PatchReply {
        let length = body.length
        var headers = [("Tus-Resumable", Self.version), ("Upload-Offset", String(offset)),
                       ("Content-Type", "application/offset+octet-stream")]
        if let (algorithm, digest) = checksum { headers.append(("Upload-Checksum", "\(algorithm.rawValue) \(digest)")) }
        let response = try session.perform(HTTPRequest(method: "PATCH", url: url, headers: headers, body: body))
        guard response.status == 204 || response.status == 200 else { throw HTTPStatusError(step: .patch, response: response) }
        let confirmed = try TusReply.patchOffset(response, sentFrom: offset, length: length)
        return (confirmed.offset, confirmed.expiresAt, response.fileETag)
    }

    /// Ends an upload on the server (termination extension).
    public func terminate(_ url: String) throws {
        let response = try session.perform(HTTPRequest(method: "DELETE", url: url, headers: [("Tus-Resumable", Self.version)]))
        guard response.status == 204 || response.status == 200 || response.status == 404 || response.status == 410 else {
            throw HTTPStatusError(step: .terminate, response: response)
        }
    }

    /// `scheme://authority` of an address: everything before the first `/` after `://`.
    static func origin(of address: String) -> Substring {
        guard let authority = address.firstRange(of: "://") else { return address[...] }
        let end = address[authority.upperBound...].firstIndex(of: "/") ?? address.endIndex
        return address[..<end]
    }

    /// Resolves a Location against the endpoint, refusing another origin: the password
    /// is only ever sent to the server it was given for.
    public func resolve(_ location: String) throws -> String {
        guard location.utf8.count <= 2048, location.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }),
              let base = URL(string: endpoint), let resolved = URL(string: location, relativeTo: base)?.absoluteURL,
              resolved.host?.isEmpty == false else {
            throw ProtocolViolation("the server gave an upload address that is not a URL: `\(ServerNumber.quoted(location))`",
                                    said: "Location: \(location)")
        }
        // The endpoint's own origin, written as the endpoint writes it and followed by a path:
        // this also refuses an address two URL parsers might read differently (`http://host:8080?@other`).
        let address = resolved.absoluteString
        guard address.lowercased().hasPrefix(Self.origin(of: endpoint).lowercased() + "/") else {
            if resolved.scheme == base.scheme, resolved.host == base.host, resolved.port == base.port, resolved.user == nil {
                throw ProtocolViolation("the server gave an upload address without a path on its own origin: `\(ServerNumber.quoted(location))`",
                                        said: "Location: \(location)")
            }
            throw ProtocolViolation("the server sent the upload to another host (\(ServerNumber.quoted(resolved.host ?? "?"))); refusing to send credentials there",
                                    said: "Location: \(location)")
        }
        return address
    }
}
