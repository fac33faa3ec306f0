import Glibc

extension WebDAVClient {
    /// The SHA-256 (hex) of the file at `path`, read whole and never stored: to tell whether
    /// a file of our size at a name is ours where the server keeps no checksum.
    public func sha256(of path: String) throws -> String {
        let sha = RunningSHA256()
        let response = try session.perform(HTTPRequest(method: "GET", url: try url(for: path), sink: .hashed(sha)))
        guard response.status == 200 else { throw HTTPStatusError(step: .get, response: response) }
        return sha.hexDigest
    }

    /// Downloads `path` into the open file `descriptor`, streaming, resuming after the
    /// first `offset` bytes already there.
    ///
    /// With `offset > 0` the request carries `Range: bytes=<offset>-` and `If-Range:
    /// <validator>` (a strong ETag or an HTTP date, see `RemoteItem.rangeValidator`), so the
    /// server sends the rest only if the file is still the one those bytes came from, and the
    /// whole new file otherwise. Without a usable validator (none, or a weak `W/` ETag) no
    /// range is asked for at all: the whole file comes again, from zero, and the result says
    /// `startedOver`. A range is never unconditional.
    ///
    /// The file is the caller's, opened `O_RDWR` (not `O_APPEND`); this call owns the bytes
    /// from `offset` on. On return:
    /// - 206 with a `Content-Range` starting at `offset`: `.resumed`; the new bytes follow
    ///   the old ones.
    /// - 200: `.wholeFile`; the file holds exactly the new bytes, from 0, whatever `offset`
    ///   was: it is emptied as the reply's headers end, before the first body byte, and
    ///   `observer` is told to start over then, so it sees the new file from its first byte;
    ///   `startedOver` tells the caller to discard what it derived from the old bytes.
    /// - 416 with `bytes */<offset>`: the file was already whole; `.resumed` with no bytes.
    /// - any other status: the file is cut back to `offset` (the error page never stays in
    ///   it) and `HTTPStatusError(step: .get)` is thrown with the server's message.
    /// - a `TransportError` (reset, stall, cancel): the bytes that arrived stay, so the caller
    ///   can resume from the file's new size with the same validator. After a 206 they follow
    ///   the first `offset` bytes; after a 200 they are the start of the file on their own,
    ///   and `observer` was told to start over before the first of them.
    ///
    /// `observer` sees the body bytes of a success reply (200, 206) in order, never those of an
    /// error page (a 416's included); only what a call that returns normally reported is
    /// trustworthy.
    public func download(_ path: String, to descriptor: Int32, from offset: Int64 = 0, ifRange validator: String? = nil,
                         observer: RestartableObserver? = nil) throws -> DownloadResult {
        precondition(offset >= 0, "a download cannot resume from a negative offset")
        let target = try url(for: path)
        try PartialFile.prepare(descriptor, at: offset)
        let ifRange = validator.flatMap(Self.strongValidator)
        let etag = ifRange.flatMap { $0.hasPrefix("\"") ? $0 : nil }

        // Without a strong validator no range is asked for: the 200 that follows replaces
        // the old bytes like any whole-file answer to a resume.
        var headers: [(String, String)] = []
        let asksRange = offset > 0 && ifRange != nil
        if asksRange, let ifRange {
            headers.append(("Range", "bytes=\(offset)-"))
            headers.append(("If-Range", ifRange))
        }
        let response = try session.perform(HTTPRequest(method: "GET", url: target, headers: headers,
                                                       sink: .download(descriptor: descriptor, observer: observer)))
        let end = try PartialFile.size(descriptor)
        // A 200 emptied the file before its body: everything in it now came with this reply.
        let start = response.status == 200 ? 0 : offset
        let received = end - start
        let replyETag = response.header("etag").flatMap(RemoteItem.headerForm(etag:))
        let contentType = response.header("content-type")

        switch response.status {
        case 206:
            guard let header = response.header("content-range"), let range = ContentRange(header),
                  let first = range.first, let last = range.last, let count = range.count else {
                try PartialFile.truncate(descriptor, to: offset)
                let said = response.header("content-range")
                throw ProtocolViolation("the server answered a range request for \(path) with 206 but no usable Content-Range"
                                        + (said.map { ": `\(ServerNumber.quoted($0))`" } ?? ""), said: said.map { "Content-Range: \($0)" })
            }
            guard asksRange, first == offset, received == count else {
                try PartialFile.truncate(descriptor, to: offset)
                throw ProtocolViolation("the server sent bytes \(first)-\(last) of \(path) when asked for \(offset)- (\(received) bytes arrived)")
            }
            // The rest of another version would be stitched onto ours: a server (or a proxy)
            // that honours Range but not If-Range says so only in the reply's own validator.
            if let sent = Self.otherVersion(asked: ifRange, etag: replyETag, lastModified: response.header("last-modified")) {
                try PartialFile.truncate(descriptor, to: offset)
                throw ProtocolViolation("the server sent the rest of another version of \(path) (\(sent)) when asked for the rest of "
                                        + "\(ifRange ?? "")", said: sent)
            }
            return DownloadResult(kind: .resumed, requestedOffset: offset, receivedBytes: received, fileSize: end,
                                  totalSize: range.total, etag: replyETag ?? etag, contentType: contentType)

        case 200:
            // The old bytes are gone already; what is not the announced file goes too.
            let declared: Int64?
            do { declared = try ServerNumber.parseOptional(response.header("content-length"), field: "Content-Length") } catch {
                try PartialFile.truncate(descriptor, to: 0)
                throw error
            }
            if let declared, declared != received {
                try PartialFile.truncate(descriptor, to: 0)
                throw ProtocolViolation("the server announced \(declared) bytes of \(path) and sent \(received)")
            }
            return DownloadResult(kind: .wholeFile, requestedOffset: offset, receivedBytes: received, fileSize: received,
                                  totalSize: received, etag: replyETag, contentType: contentType)

        default:
            let errorBody = PartialFile.read(descriptor, from: offset, limit: 4096)
            try PartialFile.truncate(descriptor, to: offset)
            if response.status == 416, asksRange, let header = response.header("content-range"),
               let range = ContentRange(header), range.first == nil, range.total == offset {
                // Nothing after `offset`: an earlier attempt got every byte but did not hear the end.
                return DownloadResult(kind: .resumed, requestedOffset: offset, receivedBytes: 0, fileSize: offset,
                                      totalSize: offset, etag: replyETag ?? etag, contentType: contentType)
            }
            throw HTTPStatusError(step: .get, response: HTTPResponse(status: response.status, headers: response.headers,
                                                                      body: errorBody))
        }
    }

    /// What a 206 says of its version when it is not the one `If-Range` named (nil when it
    /// is, or says nothing): its strong ETag against an ETag asked for, its Last-Modified
    /// against a date.
    static func otherVersion(asked: String?, etag: String?, lastModified: String?) -> String? {
        guard let asked else { return nil }
        if asked.hasPrefix("\"") {
            guard let etag, !etag.hasPrefix("W/"), etag != asked else { return nil }
            return "ETag: \(ServerNumber.quoted(etag))"
        }
        guard let lastModified, let mine = HTTPDate.milliseconds(asked), let theirs = HTTPDate.milliseconds(lastModified),
              mine != theirs else { return nil }
        return "Last-Modified: \(ServerNumber.quoted(lastModified))"
    }

    /// The validator in the form `If-Range` may carry, or nil: a strong ETag (quoted, as
    /// `RemoteItem.headerForm` gives it) or an HTTP date. A weak ETag never qualifies
    /// (RFC 9110 §13.1.5), nor does anything unreadable.
    static func strongValidator(_ text: String) -> String? {
        if text.hasPrefix("W/") || text.hasPrefix("w/") { return nil }
        if HTTPDate.milliseconds(text) != nil { return text }
        guard let etag = RemoteItem.headerForm(etag: text), etag.hasPrefix("\""), etag.count >= 2, etag.hasSuffix("\""),
              etag.unicodeScalars.allSatisfy({ $0.value >= 0x21 && $0.value != 0x7f }) else { return nil }
        return etag
    }
}
