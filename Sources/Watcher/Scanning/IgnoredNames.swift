import Platform

/// Names that are never candidates: files still being written under a temporary name,
/// editor backups, and hidden entries.
///
/// Browsers, copy tools and editors write to a temporary name and rename when done; the
/// rename (`IN_MOVED_TO`) is when the file becomes a candidate. Hidden folders are not
/// entered either: phones keep thumbnails and deleted pictures in `DCIM/.thumbnails` and
/// `.trashed-*`. Asked for every entry of every scan, so it allocates nothing.
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
        if first == UInt8(ascii: "~"), name.count > 1, name[1] == UInt8(ascii: "$") { return true }  // office lock files
        return suffixes.contains { hasSuffix(name, $0) }
    }

    /// Whether `name`, in `folder`, is left out: an ignored name is still looked at where
    /// the owner remembers a file at it. A downloaded `settings.bak` or `draft.tmp` in Local
    /// Drive is a file the person asked for, and its edits go back like any other's (an
    /// editor's temporaries beside it are still left out); a rule never takes a file at
    /// such a name, so the question costs it a look-up for names it leaves out anyway.
    static func isIgnored(_ name: [UInt8], in folder: LocalPath, remembered: (any TakenFiles)?) -> Bool {
        guard isIgnored(name) else { return false }
        guard let remembered else { return true }
        return remembered.identity(takenAt: folder.appending(LocalPath(bytes: name))) == nil
    }

    /// Whether `name` ends with `suffix` (lower-case ASCII), ignoring ASCII case.
    private static func hasSuffix(_ name: [UInt8], _ suffix: [UInt8]) -> Bool {
        guard name.count > suffix.count else { return false }
        let start = name.count - suffix.count
        for i in 0..<suffix.count {
            let c = name[start + i]
            if (0x41...0x5A).contains(c) ? c | 0x20 != suffix[i] : c != suffix[i] { return false }
        }
        return true
    }
}
