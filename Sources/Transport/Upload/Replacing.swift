/// What a request that makes a file may find at its name, and replace.
public enum Replacing: Sendable, Equatable {
    /// Nothing: a file there makes the server refuse (`NameTaken`).
    case nothing
    /// The version with this ETag, and no other (`VersionChanged`): a new version of a file.
    case version(etag: String)

    /// The headers that make a `PUT` conditional on it.
    var putHeaders: [(String, String)] {
        switch self {
        case .nothing: [("If-None-Match", "*")]
        case .version(let etag): [("If-Match", Self.entityTag(etag))]
        }
    }

    /// An ETag as a condition carries it: quoted (some servers list theirs without the
    /// quotes, as wsgidav's `getetag`), and strong: Apache calls a file's ETag weak while it
    /// is less than a second old and strong after, for the same version.
    static func entityTag(_ etag: String) -> String {
        "\"" + opaque(etag) + "\""
    }

    /// The opaque part of an ETag (no `W/`, no quotes).
    static func opaque(_ etag: String) -> String {
        var text = Substring(etag.trimmingBlanks())
        if text.hasPrefix("W/") { text = text.dropFirst(2) }
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
        return String(text)
    }

    /// Whether two ETags name the same version, compared weakly (RFC 9110 §8.8.3.2).
    public static func sameVersion(_ a: String, _ b: String) -> Bool { opaque(a) == opaque(b) }

    /// The headers that make a `MOVE` to `destination` (a URL) conditional on it: `Overwrite: F`,
    /// or a tagged `If` list naming the destination's ETag (RFC 4918 §10.4).
    func moveHeaders(destination: String) -> [(String, String)] {
        switch self {
        case .nothing: [("Overwrite", "F")]
        case .version(let etag): [("Overwrite", "T"), ("If", "<\(destination)> ([\(Self.entityTag(etag))])")]
        }
    }

    /// What a `412` to such a request means.
    func refusal(at path: String) -> Error {
        switch self {
        case .nothing: NameTaken(path: path)
        case .version(let etag): VersionChanged(path: path, etag: etag)
        }
    }
}
