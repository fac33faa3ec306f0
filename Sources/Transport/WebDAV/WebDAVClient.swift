
/// A WebDAV client for one account: lists and describes files and folders (PROPFIND),
/// creates folders (MKCOL) and downloads files (GET with Range, see `download`).
///
/// Remote paths are absolute within the account (`/Photos/IMG 1.jpg`) and plain text; they
/// are percent-encoded one component at a time only when a URL is built. Each call is one
/// or a few HTTP exchanges on the client's own connection. Not Sendable: it owns an
/// `HTTPSession`, used by one thread at a time.
public final class WebDAVClient {
    /// The account's WebDAV root, ending in `/`, e.g. `https://cloud.example/dav/alice/`.
    public let root: String
    public let session: HTTPSession
    /// The decoded path components of `root`, to recognise hrefs in replies: worked out at
    /// the first reply that needs them, since an upload makes a client per file and a small
    /// photo's often needs none.
    private(set) lazy var rootComponents: [String] = (try? WebDAVPath.decodedComponents(ofURL: root))
        ?? WebDAVPath.urlPath(root).split(separator: "/").map(String.init)

    /// A reply about one file or folder is held whole (a listing is read as it comes); it
    /// needs a few KiB.
    static let replyLimit = 4 << 20

    public init(root: String, credentials: Credentials?) {
        self.root = root.hasSuffix("/") ? root : root + "/"
        self.session = HTTPSession(credentials: credentials)
    }

    /// The URL of a remote path under this account's root.
    public func url(for path: String, isFolder: Bool = false) throws(ProtocolViolation) -> String {
        try WebDAVPath.url(root: root, path: path, isFolder: isFolder)
    }

    // MARK: Describing

    /// What the server knows about one file or folder (PROPFIND, Depth 0).
    public func properties(of path: String) throws -> RemoteItem {
        let target = WebDAVPath.normalize(path)
        let items = try propfind(target, depth: 0, isFolder: target == "/")
        guard let item = items.first(where: { $0.path == target }) else {
            throw ProtocolViolation("the server's PROPFIND reply for \(target) does not describe it")
        }
        return item
    }

    /// The files and folders directly inside `folder`, in the server's order (PROPFIND, Depth 1).
    /// With `details` false only their paths and kinds are asked for: a folder of thousands
    /// of photos then costs the server no sizes, checksums or quotas, and the reply a
    /// fraction of its length.
    public func list(_ folder: String, details: Bool = true) throws -> [RemoteItem] {
        var items: [RemoteItem] = []
        try eachItem(in: folder, details: details) { items.append($0); return true }
        return items
    }

    /// The same, each item handed to `each` as the reply arrives, never held whole: a folder
    /// of any length costs the memory of a few of its entries. `each` returns false to read
    /// no further (the rest of the reply is left unread, its connection closed). Returns
    /// whether every item was read.
    @discardableResult
    public func eachItem(in folder: String, details: Bool = true, _ each: (RemoteItem) throws -> Bool) throws -> Bool {
        let target = WebDAVPath.normalize(folder)
        return try withoutActuallyEscaping(each) { each in
            let stream = MultistatusParser.Stream { [rootComponents] entry in
                guard let item = try Self.item(entry, rootComponents: rootComponents) else { return true }
                guard item.path != target else {
                    if !item.isFolder { throw WrongRemoteKind(path: target, isFolder: false) }
                    return true
                }
                return try each(item)
            }
            let response: HTTPResponse
            do {
                response = try session.perform(propfindRequest(url(for: target, isFolder: true), depth: 1,
                                                               body: details ? Self.propfindBody : Self.kindsBody, sink: .stream(stream)))
            } catch {
                // The reply's own fault, or `each`'s, rather than the exchange broken off for it.
                if stream.failure != nil || stream.isStopped { return try stream.end() }
                throw error
            }
            guard response.status == 207 else { throw HTTPStatusError(step: .propfind, response: response) }
            return try stream.end()
        }
    }

    /// The folder's quota, or nil when the server does not report one.
    public func quota(of folder: String = "/") throws -> Quota? {
        let target = WebDAVPath.normalize(folder)
        let items = try propfind(target, depth: 0, isFolder: true)
        guard let item = items.first(where: { $0.path == target }) else {
            throw ProtocolViolation("the server's PROPFIND reply for \(target) does not describe it")
        }
        return item.quota
    }

    /// Whether anything exists at `path` (a 404 says no; other errors throw).
    public func exists(_ path: String) throws -> Bool {
        do {
            _ = try properties(of: path)
            return true
        } catch let error as HTTPStatusError where error.status == 404 {
            return false
        }
    }

    // MARK: Creating folders

    /// Creates one folder whose parent exists (MKCOL). A folder already there is success;
    /// a file there throws `WrongRemoteKind`; a missing parent is an `HTTPStatusError` 409.
    public func makeFolder(_ path: String) throws {
        let target = WebDAVPath.normalize(path)
        if target == "/" { return }
        let response = try session.perform(HTTPRequest(method: "MKCOL", url: url(for: target, isFolder: true)))
        if response.status == 201 || response.status == 200 || response.status == 204 { return }
        // Something refused: 405 when it is already there (RFC 4918 §9.3.1), and 409, 423 or
        // even 500 from servers when another client creates the same folder at that moment.
        // What PROPFIND finds now matters more than what MKCOL answered.
        if let existing = try? properties(of: target) {
            if existing.isFolder { return }
            throw WrongRemoteKind(path: target, isFolder: false)
        }
        throw HTTPStatusError(step: .mkcol, response: response)
    }

    /// Creates `path` and every missing folder above it, top down, one MKCOL each.
    public func makeFolders(_ path: String) throws {
        let parts = WebDAVPath.components(path)
        if parts.isEmpty { return }
        // The common case, a folder that is already there, costs one request.
        do {
            let existing = try properties(of: "/" + parts.joined(separator: "/"))
            if existing.isFolder { return }
            throw WrongRemoteKind(path: existing.path, isFolder: false)
        } catch let error as HTTPStatusError where error.status == 404 {}
        for depth in 1...parts.count {
            try makeFolder("/" + parts[..<depth].joined(separator: "/"))
        }
    }

    // MARK: PROPFIND

    /// The properties asked for by name: `allprop` would leave out quota and checksums,
    /// which servers compute only on request.
    static let propfindBody = Array("""
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
          <d:prop>
            <d:resourcetype/>
            <d:getcontentlength/>
            <d:getetag/>
            <d:getlastmodified/>
            <d:getcontenttype/>
            <d:quota-available-bytes/>
            <d:quota-used-bytes/>
            <oc:checksums/>
          </d:prop>
        </d:propfind>
        """.utf8)

    /// Whether each entry is a folder, and nothing more (`list` without details).
    static let kindsBody = Array("""
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>
        """.utf8)

    func propfind(_ path: String, depth: Int, isFolder: Bool, body: [UInt8] = propfindBody) throws -> [RemoteItem] {
        var response = try session.perform(propfindRequest(url(for: path, isFolder: isFolder), depth: depth, body: body))
        if !isFolder, response.status == 301 || response.status == 302 || response.status == 307 || response.status == 308,
           let slashed = try? url(for: path, isFolder: true), redirects(response, to: slashed) {
            // A folder asked for without its trailing slash (Apache mod_dav redirects).
            // Redirects are never followed in general; this one stays on the same URL.
            response = try session.perform(propfindRequest(slashed, depth: depth, body: body))
        }
        guard response.status == 207 else { throw HTTPStatusError(step: .propfind, response: response) }
        return try MultistatusParser.parse(response.body).compactMap { try Self.item($0, rootComponents: rootComponents) }
    }

    /// The item a response describes; nil for a member the server reports with an error status.
    private static func item(_ entry: MultistatusParser.Response, rootComponents: [String]) throws -> RemoteItem? {
        if let status = entry.status, !(200..<300).contains(status) { return nil }
        return try RemoteItem(path: WebDAVPath.remotePath(href: entry.href, rootComponents: rootComponents), response: entry)
    }

    private func propfindRequest(_ url: String, depth: Int, body: [UInt8], sink: ResponseSink = .memory(limit: replyLimit)) -> HTTPRequest {
        HTTPRequest(method: "PROPFIND", url: url,
                    headers: [("Depth", String(depth)), ("Content-Type", "application/xml; charset=utf-8")],
                    body: .bytes(body), sink: sink)
    }

    private func redirects(_ response: HTTPResponse, to url: String) -> Bool {
        guard let location = response.header("location") else { return false }
        let expected = WebDAVPath.urlPath(url)
        return location == url || WebDAVPath.urlPath(location) == expected
    }
}
