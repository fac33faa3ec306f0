import Glibc

/// The person's words for a local file or folder that cannot be read, wherever it was met:
/// `upload`, `share-to` and `retry` (the intake), and the watcher's walks and intake. One
/// sentence per cause, so a file refused by hand and the same file skipped by a watch rule
/// read alike; each caller adds only what it does next.
public enum LocalFileWords {
    /// A file that cannot be opened for reading.
    public static func unreadableFile(_ errno: Int32) -> String {
        errno == EACCES ? "permission denied; make it readable (chmod u+r)" : lowercased(strerror(errno))
    }

    /// A folder whose names cannot be listed.
    public static func unlistableFolder(_ errno: Int32) -> String {
        errno == EACCES ? "permission denied; this folder cannot be listed (chmod u+rx)"
            : "cannot list this folder: " + lowercased(strerror(errno))
    }

    private static func lowercased(_ text: UnsafeMutablePointer<CChar>?) -> String {
        let said = text.map { String(cString: $0) } ?? "unknown error"
        return said.prefix(1).lowercased() + said.dropFirst()
    }
}
