import Glibc
import Platform

/// Something that keeps a watcher from doing its whole job, told so a person can act.
public struct WatcherTrouble: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable, Codable {
        /// The folder is not there: deleted, renamed, or on a card that is not mounted.
        case folderMissing = "folder_missing"
        /// The path is there but is not a folder.
        case notAFolder = "not_a_folder"
        /// `fs.inotify.max_user_watches` is reached: part of the tree is scanned periodically instead.
        case outOfWatches = "out_of_watches"
        /// `fs.inotify.max_user_instances` is reached: the folder cannot be watched at all.
        case outOfInstances = "out_of_inotify_instances"
        /// A folder or file inside the tree cannot be read.
        case unreadable
        /// Anything else the kernel refused.
        case systemError = "system_error"
    }

    public var code: Code
    /// What is wrong, in the person's words.
    public var message: String
    /// What the person can do about it.
    public var action: String
    public var path: LocalPath?

    public init(code: Code, message: String, action: String, path: LocalPath? = nil) {
        self.code = code
        self.message = message
        self.action = action
        self.path = path
    }

    public var description: String { "\(message); \(action)" }

    static func folderMissing(_ folder: LocalPath) -> WatcherTrouble {
        WatcherTrouble(code: .folderMissing, message: "the folder \(folder.display) is not there (deleted, renamed, or its card or disk is not mounted)",
                       action: "watching resumes by itself when it is back", path: folder)
    }

    static func notAFolder(_ folder: LocalPath) -> WatcherTrouble {
        WatcherTrouble(code: .notAFolder, message: "\(folder.display) is not a folder",
                       action: "choose a folder for this rule", path: folder)
    }

    static func outOfWatches(_ folder: LocalPath, limit: String?) -> WatcherTrouble {
        let current = limit.map { " (now \($0))" } ?? ""
        return WatcherTrouble(code: .outOfWatches,
                              message: "the system's limit of folders watched at once is reached\(current); new files below \(folder.display) are found by a scan every few minutes instead of at once",
                              action: "raise it: `sudo sysctl fs.inotify.max_user_watches=524288` (and in /etc/sysctl.d/ to keep it)",
                              path: folder)
    }

    static func outOfInstances(_ folder: LocalPath) -> WatcherTrouble {
        WatcherTrouble(code: .outOfInstances,
                       message: "the system's limit of inotify instances is reached; \(folder.display) cannot be watched",
                       action: "close programs that watch many folders, or raise it: `sudo sysctl fs.inotify.max_user_instances=1024`",
                       path: folder)
    }

    static func unreadable(_ path: LocalPath, _ error: SystemError) -> WatcherTrouble {
        WatcherTrouble(code: .unreadable, message: "\(path.display) cannot be read (\(error.reason))",
                       action: error.errno == EACCES ? "make it readable for your user (chmod u+rx), or move it out of the watched folder"
                           : "check the disk; it is skipped until it can be read",
                       path: path)
    }

    static func system(_ error: SystemError, folder: LocalPath) -> WatcherTrouble {
        WatcherTrouble(code: .systemError, message: "watching \(folder.display) failed: \(error)",
                       action: "it is tried again at the next scan", path: folder)
    }
}
