/// Paths on the server, always absolute and `/`-separated, e.g. `/Photos/2026/IMG_0042.jpg`.
public enum RemotePath {
    /// Normalises a folder or file path: one leading `/`, no empty or `.` components, no trailing `/`.
    public static func normalize(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }

    public static func join(_ folder: String, _ name: String) -> String {
        let f = normalize(folder)
        return f == "/" ? "/" + name : f + "/" + name
    }

    /// True when the path climbs out of the account's root (`..`).
    public static func escapesRoot(_ path: String) -> Bool {
        path.split(separator: "/").contains("..")
    }
}
