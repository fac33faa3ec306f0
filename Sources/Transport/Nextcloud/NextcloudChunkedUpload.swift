import FoundationEssentials
import Platform

/// Nextcloud's chunked upload v2 for one account, one HTTP exchange per call.
///
/// An upload lives in a folder of its own under the account's uploads URL
/// (`remote.php/dav/uploads/<id>/<transfer>`): `createFolder`, then `putChunk` 1, 2, …
/// (each at least `minimumChunkSize` but the last, at most 10,000 of them), `heldChunks`
/// to ask what the server has, `assemble` (`MOVE .file`) to make the file, `delete` to
/// give up. Every request names the target file in `Destination` and the whole size in
/// `OC-Total-Length`, as v2 requires. The calls keep no state: what to resend and when to
/// start over is the caller's decision, made from what the server says. Not Sendable: it
/// owns an `HTTPSession`.
public final class NextcloudChunkedUpload {
    /// `…/remote.php/dav/uploads/<id>/`, ending in `/`.
    public let uploadsURL: String
    /// `…/remote.php/dav/files/<id>/`, ending in `/`: destinations are paths under it.
    public let webdavURL: String
    public let session: HTTPSession

    /// Nextcloud refuses to assemble chunks under 5 MB (5,000,000 bytes; S3's lower bound is
    /// 5 MiB, so that is what is asked), except the last.
    public static let minimumChunkSize: Int64 = 5 << 20
    /// Chunks larger than 5 GB are refused.
    public static let maximumChunkSize: Int64 = 5_000_000_000
    public static let maximumChunkCount = 10_000

    public init(uploadsURL: String, webdavURL: String, credentials: Credentials?) {
        self.uploadsURL = uploadsURL.hasSuffix("/") ? uploadsURL : uploadsURL + "/"
        self.webdavURL = webdavURL.hasSuffix("/") ? webdavURL : webdavURL + "/"
        self.session = HTTPSession(credentials: credentials)
    }

    /// A fresh, unguessable upload folder name, to keep as the row's handle.
    public static func newTransferName() -> String {
        "iu-" + UUID().uuidString.lowercased()
    }

    /// One chunk the server holds.
    public struct HeldChunk: Sendable, Equatable {
        /// 1...10000, from the chunk's name.
        public var number: Int
        public var size: Int64
        public init(number: Int, size: Int64) { self.number = number; self.size = size }
    }

    /// What the server said when it assembled the file.
    public struct Assembly: Sendable, Equatable {
        /// 201 (a new file) or 204 (a file was replaced).
        public var status: Int
        /// The server set the file's mtime from `X-OC-Mtime` (`X-OC-MTime: accepted`).
        public var mtimeAccepted: Bool
        public var etag: String?
    }

    // MARK: Steps

    /// MKCOL of the upload folder. A folder already there (405) throws, with its status.
    public func createFolder(_ transfer: String, destination: String, totalLength: Int64) throws {
        let response = try session.perform(HTTPRequest(method: "MKCOL", url: try folderURL(transfer),
                                                       headers: try headers(destination, totalLength)))
        guard response.status == 201 else { throw HTTPStatusError(step: .mkcol, response: response) }
    }

    /// PUTs chunk `number` from `length` bytes of `descriptor` at `offset`, streamed.
    public func putChunk(_ transfer: String, number: Int, descriptor: Int32, offset: Int64, length: Int64,
                         destination: String, totalLength: Int64, observer: ByteObserver?) throws {
        try putChunk(transfer, number: number, body: .file(descriptor: descriptor, offset: offset, length: length, observer: observer),
                     destination: destination, totalLength: totalLength)
    }

    /// PUTs chunk `number` from bytes the caller already holds (read once to hash them).
    public func putChunk(_ transfer: String, number: Int, bytes: UnsafeRawBufferPointer, destination: String,
                         totalLength: Int64, observer: ByteObserver?) throws {
        try putChunk(transfer, number: number, body: .buffer(bytes, observer: observer), destination: destination,
                     totalLength: totalLength)
    }

    func putChunk(_ transfer: String, number: Int, body: RequestBody, destination: String, totalLength: Int64) throws {
        let response = try session.perform(HTTPRequest(method: "PUT", url: try chunkURL(transfer, number),
                                                       headers: try headers(destination, totalLength), body: body))
        guard response.status == 201 || response.status == 204 else { throw HTTPStatusError(step: .put, response: response) }
    }

    /// The chunks the server holds, in number order (PROPFIND, Depth 1). A folder the server
    /// no longer has (expired, deleted) is an `HTTPStatusError` 404. Names that are not chunk
    /// numbers are left out; sizes go through `ServerNumber`.
    public func heldChunks(_ transfer: String) throws -> [HeldChunk] {
        let url = try folderURL(transfer)
        let response = try session.perform(HTTPRequest(
            method: "PROPFIND", url: url, headers: [("Depth", "1"), ("Content-Type", "application/xml; charset=utf-8")],
            body: .bytes(Self.propfindBody), sink: .memory(limit: 16 << 20)))
        guard response.status == 207 else { throw HTTPStatusError(step: .propfind, response: response) }
        let folder = try WebDAVPath.decodedComponents(ofURL: url)
        var chunks: [HeldChunk] = []
        for entry in try MultistatusParser.parse(response.body) {
            if let status = entry.status, !(200..<300).contains(status) { continue }
            let path = try WebDAVPath.remotePath(href: entry.href, rootComponents: folder)
            let name = String(path.dropFirst())
            guard !name.isEmpty, !name.contains("/"), !entry.isCollection else { continue }
            guard let number = ServerNumber.value(of: name), (1...Int64(Self.maximumChunkCount)).contains(number) else { continue }
            guard let sizeText = entry[.contentLength] else {
                throw ProtocolViolation("the server lists chunk \(number) without its size")
            }
            let size = try ServerNumber.parse(sizeText, field: "the size of chunk \(number)", in: 0...Self.maximumChunkSize)
            chunks.append(HeldChunk(number: Int(number), size: size))
        }
        chunks.sort { $0.number < $1.number }
        for (a, b) in zip(chunks, chunks.dropFirst()) where a.number == b.number {
            throw ProtocolViolation("the server lists chunk \(a.number) twice")
        }
        return chunks
    }

    /// MOVE `.file`: the server joins the chunks into `destination`, replacing only what
    /// `replacing` allows there (`Overwrite: F`, or a tagged `If` list with the version's ETag;
    /// otherwise `NameTaken` or `VersionChanged`, and the chunks stay for another MOVE).
    /// `mtime` (seconds since the epoch) goes as `X-OC-Mtime`; `sha256` (hex) is stored as
    /// `OC-Checksum: SHA256:<hex>`, so later checks can compare without downloading. A missing
    /// destination folder is an `HTTPStatusError` 409 (the folder is not created here).
    ///
    /// The destination may differ from the one the upload folder was made with: Nextcloud
    /// assembles into the folder and moves the result to the MOVE's own `Destination`.
    public func assemble(_ transfer: String, destination: String, totalLength: Int64, mtime: Int64?,
                         sha256: String?, replacing: Replacing = .nothing) throws -> Assembly {
        var headers = try headers(destination, totalLength)
        headers += replacing.moveHeaders(destination: try WebDAVPath.url(root: webdavURL, path: destination, isFolder: false))
        if let mtime { headers.append(("X-OC-Mtime", String(mtime))) }
        if let sha256 { headers.append(("OC-Checksum", "SHA256:" + sha256.lowercased())) }
        let response = try session.perform(HTTPRequest(method: "MOVE", url: try folderURL(transfer) + ".file", headers: headers))
        if response.status == 412 { throw replacing.refusal(at: destination) }
        guard response.status == 201 || response.status == 204 else { throw HTTPStatusError(step: .move, response: response) }
        return Assembly(status: response.status,
                        mtimeAccepted: response.header("x-oc-mtime")?.lowercased() == "accepted",
                        etag: response.fileETag)
    }

    /// Removes one chunk (one that cannot stay, so that the assembly never meets it).
    /// A chunk already gone is success.
    public func deleteChunk(_ transfer: String, number: Int) throws {
        let response = try session.perform(HTTPRequest(method: "DELETE", url: try chunkURL(transfer, number)))
        guard response.isSuccess || response.status == 404 else { throw HTTPStatusError(step: .delete, response: response) }
    }

    /// Removes the upload folder and the chunks in it. A folder already gone is success.
    public func delete(_ transfer: String) throws {
        let response = try session.perform(HTTPRequest(method: "DELETE", url: try folderURL(transfer)))
        guard response.isSuccess || response.status == 404 else { throw HTTPStatusError(step: .delete, response: response) }
    }

    // MARK: Addresses

    /// The upload folder's URL, ending in `/`.
    public func folderURL(_ transfer: String) throws(ProtocolViolation) -> String {
        guard !transfer.isEmpty, transfer != ".", transfer != "..", !transfer.contains("/") else {
            throw ProtocolViolation("`\(ServerJSON.shown(transfer))` cannot name an upload folder")
        }
        return uploadsURL + WebDAVPath.encode(component: transfer) + "/"
    }

    func chunkURL(_ transfer: String, _ number: Int) throws(ProtocolViolation) -> String {
        guard (1...Self.maximumChunkCount).contains(number) else {
            throw ProtocolViolation("chunk numbers go from 1 to \(Self.maximumChunkCount), not \(number)")
        }
        // Zero-padded, so servers that sort names as text (chunking v1) join them in order too.
        let digits = String(number)
        return try folderURL(transfer) + String(repeating: "0", count: 5 - digits.count) + digits
    }

    private func headers(_ destination: String, _ totalLength: Int64) throws(ProtocolViolation) -> [(String, String)] {
        [("Destination", try WebDAVPath.url(root: webdavURL, path: destination, isFolder: false)),
         ("OC-Total-Length", String(totalLength))]
    }

    static let propfindBody = Array("""
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getcontentlength/></d:prop></d:propfind>
        """.utf8)
}
