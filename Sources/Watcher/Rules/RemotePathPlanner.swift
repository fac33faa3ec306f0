import FoundationEssentials
import Platform
import Queue

/// Where a watched file goes on the server: the rule's folder, the date folders its
/// capture date calls for, then its own name (`/Photos/2024/03/IMG_0001.jpg`).
public enum RemotePathPlanner {
    /// The full remote path for `file`.
    public static func remotePath(for file: LocalPath, capturedAt date: CaptureDate, rule: WatchRule,
                                  timeZone: TimeZone? = nil) -> String {
        RemotePath.join(folder(capturedAt: date, subfolders: rule.subfolders, under: rule.remoteFolder, timeZone: timeZone),
                        file.lastComponent.text)
    }

    /// The shape of the folders a rule files into, for people: `/Photos/YYYY/MM/`.
    public static func example(for rule: WatchRule) -> String {
        let parts: [String] = switch rule.subfolders {
        case .none: []
        case .year: ["YYYY"]
        case .month: ["YYYY", "MM"]
        case .day: ["YYYY", "MM", "DD"]
        }
        let folder = RemotePath.normalize(([RemotePath.normalize(rule.remoteFolder)] + parts).joined(separator: "/"))
        return folder.hasSuffix("/") ? folder : folder + "/"
    }

    /// The remote folder for a file taken at `date`. A camera's clock is used as it showed
    /// (with or without its EXIF offset, that is the photographer's day); an instant (a
    /// video's creation time, a file's mtime) is turned into a day in `timeZone` (nil: the system's).
    public static func folder(capturedAt date: CaptureDate, subfolders: WatchRule.DateSubfolders, under remoteFolder: String,
                              timeZone: TimeZone? = nil) -> String {
        let fields = date.calendarFields(in: timeZone)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let parts: [String]
        switch subfolders {
        case .none: parts = []
        case .year: parts = ["\(fields.year)"]
        case .month: parts = ["\(fields.year)", two(fields.month)]
        case .day: parts = ["\(fields.year)", two(fields.month), two(fields.day)]
        }
        return RemotePath.normalize(([RemotePath.normalize(remoteFolder)] + parts).joined(separator: "/"))
    }
}
