import Glibc
/// Turns a name that came from a server into a safe local file name, and finds a free one.
///
/// Pure functions of their input (the file system is asked through a closure), so every
/// hostile case is a one-line test.
public enum DownloadName {
    /// Linux's NAME_MAX: the most bytes one path component may have.
    public static let maximumBytes = 255
    /// The suffix of the sibling a download is written into until it is whole.
    public static let partSuffix = ".part"
    /// What an empty or all-dots name becomes.
    public static let fallback = "download"

    /// A file name that is safe to create in a folder and cannot hide itself:
    /// - `/` becomes `_` (a name, never a path; `../../etc/passwd` stays in its folder);
    /// - NUL, control characters (C0, DEL, C1) and bidi overrides become `_`, so a name
    ///   can neither break a line nor show `exe.jpg` for `gpj.exe`;
    /// - surrounding white space and leading dots go (`.bashrc` → `bashrc`; `.`, `..` → empty);
    /// - it is cut, on a character boundary, so that the name plus `.part` fits in 255 bytes,
    ///   keeping a short extension;
    /// - an empty result becomes `download`.
    public static func sanitize(_ serverName: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in serverName.unicodeScalars {
            scalars.append(isUnsafe(scalar) ? "_" : scalar)
        }
        // By scalars, not characters: "." followed by a combining mark is one Character
        // that does not equal ".", yet its first byte still hides the file.
        while let first = scalars.first, first == "." || first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        if scalars.isEmpty { return fallback }
        let name = fit(String(scalars), suffix: "", limit: maximumBytes - partSuffix.utf8.count)
        return name.isEmpty ? fallback : name
    }

    /// The name to download `preferred` as in `folder`: `name.ext` if it is free, else
    /// `name (1).ext`, `name (2).ext`… as browsers do. A name is taken when `exists` says so
    /// for it or for its `.part` sibling (another download is on its way there).
    ///
    /// `exists` gets full paths (`folder/name`). The result is sanitized and leaves room for
    /// `.part`.
    public static func available(in folder: String, preferred: String, exists: (String) -> Bool) -> String {
        let name = sanitize(preferred)
        let base = folder.hasSuffix("/") ? folder : folder + "/"
        func isTaken(_ candidate: String) -> Bool {
            exists(base + candidate) || exists(base + candidate + partSuffix)
        }
        if !isTaken(name) { return name }
        var counter = 1
        while true {
            let candidate = numbered(name, counter)
            if !isTaken(candidate) { return candidate }
            counter += 1
        }
    }

    /// The `counter`-th alternative to a taken name, as browsers and `available` number
    /// them: `photo.jpg`, 2 → `photo (2).jpg`; `README`, 1 → `README (1)`. Also used for
    /// names on the server, where an upload never replaces a different file.
    public static func numbered(_ name: String, _ counter: Int) -> String {
        let (stem, ext) = split(name)
        return fit(stem, suffix: " (\(counter))" + ext, limit: maximumBytes - partSuffix.utf8.count)
    }

    /// The name a new version takes beside a server file that changed since it was
    /// downloaded, as sync clients name it: `report.odt`, `2026-12-03 0715` →
    /// `report (conflicted copy 2026-12-03 0715).odt`.
    public static func conflicted(_ name: String, stamp: String) -> String {
        let (stem, ext) = split(name)
        return fit(stem, suffix: " (conflicted copy \(stamp))" + ext, limit: maximumBytes - partSuffix.utf8.count)
    }

    /// A moment in local time as a conflicted copy's name shows it: `2026-12-03 0715`.
    public static func stamp(_ moment: time_t) -> String {
        var moment = moment
        var parts = tm()
        localtime_r(&moment, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour))\(two(parts.tm_min))"
    }

    /// `photo.jpg` → (`photo`, `.jpg`); `archive.tar.gz` → (`archive.tar`, `.gz`); `README`
    /// → (`README`, ``). An extension is short and has no spaces; otherwise it is part of the stem.
    static func split(_ name: String) -> (stem: String, ext: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        let ext = name[dot...]
        guard ext.utf8.count <= 16, ext.count > 1, !ext.contains(where: \.isWhitespace) else { return (name, "") }
        return (String(name[..<dot]), String(ext))
    }

    /// `stem + suffix` cut to `limit` UTF-8 bytes by dropping whole characters from the end
    /// of `stem` (its extension, when the name is cut as a whole, is kept if it is short).
    static func fit(_ stem: String, suffix: String, limit: Int) -> String {
        if stem.utf8.count + suffix.utf8.count <= limit { return stem + suffix }
        var (head, tail) = suffix.isEmpty ? split(stem) : (stem, suffix)
        if tail.utf8.count >= limit { (head, tail) = (head + tail, "") }
        let budget = limit - tail.utf8.count
        var kept = prefix(bytes: budget, of: head.map { String($0) })
        if kept.isEmpty {
            // One "character" can be hundreds of bytes (a base letter with many combining
            // marks); then cut between scalars, still a UTF-8 boundary.
            kept = prefix(bytes: budget, of: head.unicodeScalars.map { String($0) })
        }
        return kept + tail
    }

    private static func prefix(bytes budget: Int, of pieces: [String]) -> String {
        var kept = ""
        var left = budget
        for piece in pieces {
            let size = piece.utf8.count
            if size > left { break }
            kept += piece
            left -= size
        }
        while let last = kept.unicodeScalars.last, last.properties.isWhitespace { kept.unicodeScalars.removeLast() }
        return kept
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true // NUL, C0, DEL, C1
        case 0x2F: return true // "/"
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F: return true // bidi overrides and marks
        default: return false
        }
    }
}
