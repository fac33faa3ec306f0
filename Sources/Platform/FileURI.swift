import Glibc

/// Turns what a file manager passes (`%F` paths or `%U` URIs) into local paths.
///
/// A `file://` URI is percent-encoded bytes: `%20` is a space, `%0A` a newline, `%FF` a
/// byte that is not UTF-8. They decode to the exact bytes the kernel knows the file by,
/// never through `String`, which would replace such bytes. Only files on this computer can
/// be sent: a URI naming another host, or another scheme (`sftp://`, `smb://`, `trash:`),
/// is refused with words saying so.
public enum FileURI {
    /// Why an argument cannot name a local file.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// The argument as given, escaped for a terminal.
        public var argument: String
        public var message: String
        public var description: String { "\(argument): \(message)" }
    }

    /// The local path an argument names: a `file:` URI decoded, or a plain path as it is.
    ///
    /// Something that exists on disk under exactly these bytes is always a path, so a file
    /// really named `file:x` in the working folder still works.
    public static func localPath(forArgument bytes: [UInt8]) throws(Problem) -> LocalPath {
        let plain = LocalPath(bytes: bytes)
        guard let scheme = scheme(of: bytes) else { return plain }
        var st = stat()
        if plain.withCString({ lstat($0, &st) }) == 0 { return plain }
        guard scheme == "file" else {
            throw Problem(argument: DisplayText.escape(bytes),
                          message: "is not a file on this computer (a \(scheme): address); share-to sends local files only. Copy it to a local folder first")
        }
        return try decode(bytes)
    }

    /// Decodes a `file:` URI: `file:///p`, `file://localhost/p`, `file://<this host>/p` or `file:/p`.
    public static func decode(_ uri: [UInt8]) throws(Problem) -> LocalPath {
        let shown = DisplayText.escape(uri)
        guard scheme(of: uri) == "file" else { throw Problem(argument: shown, message: "is not a file: URI") }
        var rest = uri[(uri.firstIndex(of: UInt8(ascii: ":"))! + 1)...]
        if rest.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")]) {
            rest = rest.dropFirst(2)
            let hostEnd = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
            let host = PercentEncoding.decode(rest[..<hostEnd])
            if !isLocal(host: host) {
                throw Problem(argument: shown, message: "is on another computer (\(DisplayText.escape(host))); share-to sends files from this computer only. Copy it here first, or open it from a folder mounted on this computer")
            }
            rest = rest[hostEnd...]
        }
        guard rest.first == UInt8(ascii: "/") else {
            throw Problem(argument: shown, message: "is not an absolute file: URI (expected file:///folder/name)")
        }
        // File managers encode `%` as `%25`; a sloppy one that did not still means the file
        // with a `%` in its name. `#` and `?` are kept too: a file has no fragment or query,
        // so in a file URI they can only be part of the name.
        let bytes = PercentEncoding.decode(rest)
        if bytes.contains(0) {
            throw Problem(argument: shown, message: "contains an encoded NUL byte (%00); no file can have that name")
        }
        return LocalPath(bytes: bytes)
    }

    /// The URI scheme, lower-cased, when `bytes` start with one followed by `:` and then
    /// `//` (or any `file:`); nil for a plain path such as `notes:draft.txt`.
    static func scheme(of bytes: [UInt8]) -> String? {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return nil }
        let name = bytes[..<colon]
        guard isAlpha(name.first!), name.allSatisfy({ isAlpha($0) || isDigit($0) || $0 == UInt8(ascii: "+")
            || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }) else { return nil }
        let scheme = String(decoding: name, as: UTF8.self).lowercased()
        if scheme == "file" { return scheme }
        return bytes[(colon + 1)...].starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")]) ? scheme : nil
    }

    /// Empty, `localhost`, or this computer's own name.
    static func isLocal(host: [UInt8]) -> Bool {
        if host.isEmpty { return true }
        let name = String(decoding: host, as: UTF8.self).lowercased()
        if name == "localhost" || name == "localhost.localdomain" || name == "127.0.0.1" || name == "[::1]" { return true }
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return false }
        let own = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }.lowercased()
        return !own.isEmpty && (name == own || name.hasPrefix(own + "."))
    }

    private static func isAlpha(_ b: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
    }

    private static func isDigit(_ b: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) }
}
