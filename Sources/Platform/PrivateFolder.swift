import Glibc

/// A folder that only this user may change: the state, config and runtime folders.
///
/// Anyone who can write into such a folder can swap the queue, plant a config that trusts
/// their certificate authority, or answer on the agent's socket. So the folder must belong
/// to the user and not be writable by group or others, or the program refuses to use it.
public enum PrivateFolder {
    /// What the folder is for, in the person's words, e.g. "state folder".
    public enum Role: String, Sendable {
        case state = "state folder", config = "config folder", runtime = "runtime folder"

        /// Symbolic links are fine where the person put them (a config folder kept with
        /// dotfiles); the runtime folder may live in /tmp, where anyone can plant one.
        var followsLinks: Bool { self != .runtime }

        var variable: String {
            switch self {
            case .state: "XDG_STATE_HOME"
            case .config: "XDG_CONFIG_HOME"
            case .runtime: "XDG_RUNTIME_DIR"
            }
        }
    }

    /// A folder that is not private: which one, what is wrong, what to do.
    public struct Problem: Error, CustomStringConvertible, Sendable, Equatable {
        public var path: String
        public var message: String
        public var action: String
        public var description: String { "the \(message)\n  \(action)" }
        public init(path: String, message: String, action: String) {
            self.path = path; self.message = message; self.action = action
        }
    }

    /// Creates `path` with mode 0700 (missing parents too) and checks that it is private;
    /// a folder of this user that others could only read is tightened to 0700.
    public static func prepare(_ path: String, role: Role) throws(Problem) {
        var current = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + component
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                throw Problem(path: path, message: "\(role.rawValue) \(DisplayText.escape(path)) cannot be created: \(SystemError("mkdir", path: current).description)",
                              action: "check that \(DisplayText.escape(current)) can be created, or point \(role.variable) elsewhere")
            }
        }
        try verify(path, role: role, tighten: true)
    }

    /// Checks an existing folder without changing it; a missing one is no problem.
    public static func check(_ path: String, role: Role) throws(Problem) {
        var st = stat()
        if lstat(path, &st) != 0 && errno == ENOENT { return }
        try verify(path, role: role, tighten: false)
    }

    static func verify(_ path: String, role: Role, tighten: Bool) throws(Problem) {
        let me = geteuid()
        var link = stat()
        guard lstat(path, &link) == 0 else {
            throw Problem(path: path, message: "\(role.rawValue) \(DisplayText.escape(path)) cannot be checked: \(SystemError("lstat", path: path).reason)",
                          action: "check its permissions, or point \(role.variable) elsewhere")
        }
        if link.st_mode & S_IFMT == S_IFLNK {
            guard role.followsLinks else {
                throw Problem(path: path, message: "\(role.rawValue) \(DisplayText.escape(path)) is a symbolic link, which someone could point anywhere",
                              action: "remove it (rm \"\(DisplayText.escape(path))\") and run the command again")
            }
            guard link.st_uid == me || link.st_uid == 0 else {
                throw Problem(path: path, message: "\(role.rawValue) \(DisplayText.escape(path)) is a symbolic link that belongs to \(owner(link.st_uid)), not to you",
                              action: "remove it (rm \"\(DisplayText.escape(path))\") and run the command again")
            }
        }
        // Checked and tightened through one descriptor, so the folder cannot be swapped in between.
        let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (role.followsLinks ? 0 : O_NOFOLLOW)
        let fd = open(path, flags)
        guard fd >= 0 else {
            let e = errno
            let what = e == ENOTDIR ? "is not a folder" : "cannot be opened: \(String(cString: strerror(e)))"
            throw Problem(path: path, message: "\(role.rawValue) \(DisplayText.escape(path)) \(what)",
                          action: "move it aside and run the command again, or point \(role.variable) elsewhere")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw Problem(path: path, message: "\(role.rawValue) \(DisplayText.escape(path)) cannot be checked: \(SystemError("fstat", path: path).reason)",
                          action: "check its permissions")
        }
        guard st.st_uid == me else {
            throw Problem(path: path, message: "\(role.rawValue) \(DisplayText.escape(path)) belongs to \(owner(st.st_uid)), not to you",
                          action: role == .runtime && path.hasPrefix("/tmp/")
                              ? "someone else made it; have it removed (as its owner or as root), or log in through a session that sets XDG_RUNTIME_DIR"
                              : "take it back (chown -R \(name(me)) \"\(DisplayText.escape(path))\"), or point \(role.variable) at a folder of your own")
        }
        if st.st_mode & 0o022 != 0 {
            throw Problem(path: path, message: "\(role.rawValue) \(DisplayText.escape(path)) can be changed by other users (mode \(octal(st.st_mode & 0o7777)))",
                          action: "make it yours alone: chmod 700 \"\(DisplayText.escape(path))\"")
        }
        if tighten, st.st_mode & 0o077 != 0 { fchmod(fd, 0o700) }
    }

    /// `user nobody (uid 65534)`, or `uid 4242` for a number without a name.
    static func owner(_ uid: uid_t) -> String {
        let known = name(uid)
        return known == String(uid) ? "uid \(uid)" : "user \(known) (uid \(uid))"
    }

    static func name(_ uid: uid_t) -> String {
        if let pw = getpwuid(uid), let name = pw.pointee.pw_name { return String(cString: name) }
        return String(uid)
    }

    static func octal(_ mode: mode_t) -> String { "0" + String(mode, radix: 8) }
}
