import Glibc
import Platform

/// A failed inotify call, sorted by what the watcher must do about it.
struct InotifyError: Error, Sendable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        /// ENOSPC from inotify_add_watch: `fs.inotify.max_user_watches` is reached.
        case outOfWatches
        /// EMFILE from inotify_init1: `fs.inotify.max_user_instances` is reached.
        case outOfInstances
        /// ENOENT, ENOTDIR: the folder is not there (any more), or is not a folder.
        case gone
        /// EACCES: this user may not read the folder.
        case denied
        case other
    }

    var kind: Kind
    var system: SystemError

    init(_ system: SystemError) {
        self.system = system
        switch system.errno {
        case ENOSPC: kind = .outOfWatches
        case EMFILE: kind = system.operation == "inotify_init1" ? .outOfInstances : .other
        case ENOENT, ENOTDIR: kind = .gone
        case EACCES: kind = .denied
        default: kind = .other
        }
    }

    var description: String { system.description }
}
