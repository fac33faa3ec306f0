import Platform

/// Turns remote paths (`/Photos/IMG 1.jpg`, relative to an account's WebDAV root) into
/// URLs and turns the server's hrefs back into remote paths.
///
/// Both directions work one path component at a time: a name is text, and only on the
/// wire does it become percent-encoded bytes.
public enum WebDAVPath {
    /// The components of a remote path: no empty or `.` parts.
    public static func components(_ path: String) -> [String] {
        slashSeparated(Substring(path)).map(String.init).filter { $0 != "." }
    }

    /// Splits at every `/` scalar. Splitting by `Character` would miss a slash that a
    /// preceding prepend mark (U+0600...) pulls into its grapheme cluster, so `"\u{600}/x"`
    /// would stay one name with a slash inside.
    static func slashSeparated(_ text: Substring) -> [Substring] {
        text.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true).map { Substring($0) }
    }

    /// `/a/b`, or `/` for the root.
    public static func normalize(_ path: String) -> String {
        "/" + components(path).joined(separator: "/")
    }

    /// Percent-encodes one path component: every byte of its UTF-8 form except the RFC 3986
    /// unreserved characters.
    public static func encode(component: String) -> String {
        PercentEncoding.encode(component.utf8)
    }

    /// The URL of `path` under `root` (which ends in `/`). Folders get a trailing `/`, as
    /// servers expect for collections (some redirect without it, and redirects are not followed).
    public static func url(root: String, path: String, isFolder: Bool) throws(ProtocolViolation) -> String {
        let parts = components(path)
        if parts.contains("..") {
            throw ProtocolViolation("the remote path \(shown(path)) climbs out of the account's folder (..)")
        }
        if parts.contains(where: { $0.utf8.contains(0) }) {
            throw ProtocolViolation("the remote path \(shown(path)) holds a NUL character, which no file name can")
        }
        let encoded = parts.map(encode(component:)).joined(separator: "/")
        let base = root.hasSuffix("/") ? root : root + "/"
        if encoded.isEmpty { return base }
        return base + encoded + (isFolder ? "/" : "")
    }

    /// Decodes `%XX` escapes into bytes and reads them as UTF-8 (invalid sequences become
    /// U+FFFD). Nil when an escape is malformed.
    public static func decode(component: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.utf8.count)
        var iterator = component.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The path part of a URL or of an absolute path (`http://h/dav/a/x?q` → `/dav/a/x`).
    static func urlPath(_ urlOrPath: String) -> Substring {
        var rest = Substring(urlOrPath)
        if let scheme = rest.firstRange(of: "://") {
            rest = rest[scheme.upperBound...]
            rest = rest[(rest.unicodeScalars.firstIndex(of: "/") ?? rest.endIndex)...]
        }
        if let end = rest.unicodeScalars.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        return rest
    }

    /// The decoded components of a URL's path.
    static func decodedComponents(ofURL urlOrPath: String) throws(ProtocolViolation) -> [String] {
        var result: [String] = []
        for raw in slashSeparated(urlPath(urlOrPath)) {
            guard let name = decode(component: raw) else {
                throw ProtocolViolation("the server sent a malformed href (bad %-escape): \(shown(urlOrPath))")
            }
            if name == "." { continue }
            result.append(name)
        }
        return result
    }

    /// The remote path an href names, given the decoded components of the root URL's path.
    ///
    /// Hrefs may be absolute URLs or absolute paths and may encode differently from us
    /// (`%40` or `@`); comparing decoded components absorbs that. An href outside the root,
    /// or one whose decoded name holds a `/` or is `..`, is a protocol violation: a listing
    /// must never be able to point a download or an upload somewhere else.
    static func remotePath(href: String, rootComponents: [String]) throws(ProtocolViolation) -> String {
        let parts = try decodedComponents(ofURL: href)
        guard parts.count >= rootComponents.count, Array(parts[..<rootComponents.count]) == rootComponents else {
            throw ProtocolViolation("the server listed \(shown(href)), which is outside the account's folder")
        }
        let relative = parts[rootComponents.count...]
        for name in relative where name == ".." || name.contains("/") || name.contains("\0") {
            throw ProtocolViolation("the server listed an entry with an impossible name: \(shown(href))")
        }
        return "/" + relative.joined(separator: "/")
    }

    /// An href for a message: it comes from the server, so it is cut short and its control
    /// characters are escaped before it can reach a terminal or a log.
    static func shown(_ href: String) -> String {
        DisplayText.escape(String(href.prefix(200)))
    }
}
