/// Names that are never candidates: files still being written under a temporary name,
/// editor backups, and hidden entries.
///
/// Browsers, copy tools and editors write to a temporary name and rename when done; the
/// rename (`IN_MOVED_TO`) is when the file becomes a candidate. Hidden folders are not
/// entered either: phones keep thumbnails and deleted pictures in `DCIM/.thumbnails` and
/// `.trashed-*`.
enum IgnoredNames {
    private static let suffixes: [[UInt8]] = [
        ".part", ".partial", ".tmp", ".temp", ".crdownload", ".download", ".opdownload", ".filepart",
        ".!qb", ".swp", ".kate-swp", ".bak",
    ].map { Array($0.utf8) }

    static func isIgnored(_ name: [UInt8]) -> Bool {
        guard let first = name.first, let last = name.last else { return true }
        if first == UInt8(ascii: ".") { return true }  // dot-files and dot-folders, `.` and `..`
        if last == UInt8(ascii: "~") { return true }  // editor backups: `IMG_1.jpg~`
        if first == UInt8(ascii: "#"), last == UInt8(ascii: "#") { return true }  // Emacs autosave
        if name.starts(with: Array("~$".utf8)) { return true }  // office lock files
        let lowered = name.map { (0x41...0x5a).contains($0) ? $0 | 0x20 : $0 }
        return suffixes.contains { lowered.count > $0.count && lowered.suffix($0.count).elementsEqual($0) }
    }
}
