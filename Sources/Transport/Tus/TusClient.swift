import Foundation
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
        guard let versions = response.header("tus-version") else {
            throw ProtocolViolation("\(Log.redact(url: endpoint)) is not a tus server (no Tus-Version header)")
        }
        func list(_ h: String) -> [String] {
            (response.header(h) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        return TusServerInfo(versions: list("tus-version").isEmpty ? [versions] : list("tus-version"),
                             extensions: Set(list("tus-extension")),
                             maxSize: response.header("tus-max-size").flatMap { Int64($0) },
                             checksumAlgorithms: list("tus-checksum-algorithm"))
    }

    /// Creates an upload and returns its URL (resolved against the endpoint, same origin only).
    public func create(length: Int64, metadata: [(String, String)]) throws -> (url: String, expires: String?) {
        let encoded = metadata.map { key, value in "\(key) \(Data(value.utf8).base64EncodedString())" }.joined(separator: ",")
        let response = try session.perform(HTTPRequest(method: "POST", url: endpoint, headers: [
            ("Tus-Resumable", Self.version), ("Upload-Length", String(length)), ("Upload-Metadata", encoded),
        ]))
        guard response.status == 201 else { throw HTTPStatusError(step: .create, response: response) }
        guard let location = response.header("location"), !location.isEmpty else {
            throw ProtocolViolation("the server created an upload but did not say where (no Location header)")
        }
        return (try resolve(location), response.header("upload-expires"))
    }

    /// Asks where the server stands on an upload.
    public func status(of url: String) throws -> TusUploadStatus {
        let response = try session.perform(HTTPRequest(method: "HEAD", url: url, headers: [("Tus-Resumable", Self.version)]))
        guard response.status == 200 || response.status == 204 else { throw HTTPStatusError(step: .head, response: response) }
        guard let offsetText = response.header("upload-offset"), let offset = Int64(offsetText), offset >= 0 else {
            throw ProtocolViolation("the server's answer about an upload has no valid Upload-Offset")
        }
        return TusUploadStatus(offset: offset, length: response.header("upload-length").flatMap { Int64($0) },
                               expires: response.header("upload-expires"))
    }

    /// Sends `length` bytes of `descriptor` from `offset` in one PATCH and returns the
    /// offset the server confirms. `checksum` is `(algorithm, base64 digest)` of these bytes.
    public func patch(url: String, descriptor: Int32, offset: Int64, length: Int64, observer: ByteObserver?,
                      checksum: (ChecksumAlgorithm, String)? = nil) throws -> (offset: Int64, expires: String?) {
        try patch(url: url, offset: offset, body: .file(descriptor: descriptor, offset: offset, length: length, observer: observer),
                  checksum: checksum)
    }

    /// Sends a chunk already in memory (read once to checksum it) in one PATCH.
    public func patch(url: String, offset: Int64, bytes: UnsafeRawBufferPointer, observer: ByteObserver?,
                      checksum: (ChecksumAlgorithm, String)? = nil) throws -> (offset: Int64, expires: String?) {
        try patch(url: url, offset: offset, body: .buffer(bytes, observer: observer), checksum: checksum)
    }

    func patch(url: String, offset: Int64, body: RequestBody, checksum: (ChecksumAlgorithm, String)?) throws -> (offset: Int64, expires: String?) {
        let length = body.length
        var headers = [("Tus-Resumable", Self.version), ("Upload-Offset", String(offset)),
                       ("Content-Type", "application/offset+octet-stream")]
        if let (algorithm, digest) = checksum { headers.append(("Upload-Checksum", "\(algorithm.rawValue) \(digest)")) }
        let response = try session.perform(HTTPRequest(method: "PATCH", url: url, headers: headers, body: body))
        guard response.status == 204 || response.status == 200 else { throw HTTPStatusError(step: .patch, response: response) }
        guard let newOffsetText = response.header("upload-offset"), let newOffset = Int64(newOffsetText),
              newOffset >= offset, newOffset <= offset + length else {
            throw ProtocolViolation("the server confirmed a chunk with an impossible Upload-Offset")
        }
        return (newOffset, response.header("upload-expires"))
    }

    /// Ends an upload on the server (termination extension).
    public func terminate(_ url: String) throws {
        let response = try session.perform(HTTPRequest(method: "DELETE", url: url, headers: [("Tus-Resumable", Self.version)]))
        guard response.status == 204 || response.status == 200 || response.status == 404 || response.status == 410 else {
            throw HTTPStatusError(step: .terminate, response: response)
        }
    }

    /// Resolves a Location against the endpoint, refusing another origin: the password
    /// is only ever sent to the server it was given for.
    public func resolve(_ location: String) throws -> String {
        guard let base = URL(string: endpoint), let resolved = URL(string: location, relativeTo: base)?.absoluteURL else {
            throw ProtocolViolation("the server gave an upload address that is not a URL")
        }
        guard resolved.scheme == base.scheme, resolved.host == base.host, resolved.port == base.port else {
            throw ProtocolViolation("the server sent the upload to another host (\(resolved.host ?? "?")); refusing to send credentials there")
        }
        return resolved.absoluteString
    }
}

/// Parses an HTTP date (`Upload-Expires`, `Retry-After`) into milliseconds since the epoch.
public enum HTTPDate {
    public static func milliseconds(_ text: String) -> Int64? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return Int64(date.timeIntervalSince1970 * 1000) }
        }
        return nil
    }

    /// `Retry-After` as seconds from now: either delta-seconds or an HTTP date.
    public static func retryAfterSeconds(_ text: String, now: Int64) -> Double? {
        if let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds >= 0 { return seconds }
        if let ms = milliseconds(text) { return max(0, Double(ms - now) / 1000) }
        return nil
    }
}
