import Glibc

/// Where instant-upload keeps its files, following the XDG base directory spec.
///
/// Tests point everything at temporary folders by setting the XDG variables.
public struct XDGPaths: Sendable {
    public var environment: [String: String]

    public init(environment: [String: String] = ProcessEnvironment.current) {
        self.environment = environment
    }

    public var home: String {
        if let h = environment["HOME"], !h.isEmpty { return h }
        if let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }

    private func base(_ variable: String, default fallback: String) -> String {
        // The spec says relative values are invalid and must be ignored.
        if let v = environment[variable], v.hasPrefix("/") { return v }
        return home + "/" + fallback
    }

    /// `$XDG_DATA_HOME`, e.g. `~/.local/share`: where the person's trash lives.
    public var dataHome: String { base("XDG_DATA_HOME", default: ".local/share") }
    public var configDirectory: String { base("XDG_CONFIG_HOME", default: ".config") + "/instant-upload" }
    public var stateDirectory: String { base("XDG_STATE_HOME", default: ".local/state") + "/instant-upload" }
    public var queueDatabase: String { stateDirectory + "/queue.sqlite3" }
    public var configFile: String { configDirectory + "/config.ini" }
    public var credentialsFile: String { configDirectory + "/credentials" }

    /// `$XDG_RUNTIME_DIR/instant-upload`, or a private folder under /tmp when the session has none.
    ///
    /// The /tmp fallback is named after the queue it serves as well as the user: two HOMEs
    /// (or state folders) of one user get two agents, never one answering for the other.
    public var runtimeDirectory: String {
        if let v = environment["XDG_RUNTIME_DIR"], v.hasPrefix("/") { return v + "/instant-upload" }
        return "/tmp/instant-upload-\(geteuid())-\(Self.tag(Self.canonical(stateDirectory)))"
    }

    /// The path with every existing part resolved (links, `..`), so two spellings of one
    /// folder give one name; parts that do not exist yet are kept as written.
    static func canonical(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return path }
        return canonical(String(path[..<slash])) + path[slash...]
    }

    /// 64-bit FNV-1a of the text, as 16 hex digits: short enough for a socket address.
    static func tag(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
    public var controlSocket: String { runtimeDirectory + "/agent.sock" }
    public var agentLock: String { runtimeDirectory + "/agent.lock" }

    /// The download folder as `xdg-user-dir DOWNLOAD` resolves it: `XDG_DOWNLOAD_DIR` from
    /// the environment or from `user-dirs.dirs`, else `~/Downloads`.
    public var downloadDirectory: String {
        if let v = environment["XDG_DOWNLOAD_DIR"], v.hasPrefix("/") { return v }
        let userDirs = base("XDG_CONFIG_HOME", default: ".config") + "/user-dirs.dirs"
        if let text = try? FileIO.readSmallFile(userDirs), let value = Self.parseUserDirs(text, key: "XDG_DOWNLOAD_DIR") {
            return value.replacing("$HOME", with: home)
        }
        return home + "/Downloads"
    }

    /// Where downloads land: `Local Drive/` inside the download folder.
    public var localDrive: String { downloadDirectory + "/Local Drive" }

    /// Reads `KEY="value"` from a user-dirs.dirs file (shell syntax, `$HOME` allowed).
    public static func parseUserDirs(_ text: String, key: String) -> String? {
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingBlanks()
            guard trimmed.hasPrefix(key + "=") else { continue }
            var value = String(trimmed.dropFirst(key.count + 1))
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            guard value.hasPrefix("/") || value.hasPrefix("$HOME") else { return nil }
            return value
        }
        return nil
    }
}

/// The process environment as a dictionary.
public enum ProcessEnvironment {
    /// Without the variables this process set for itself only (see `setForThisProcessOnly`),
    /// so children started with it do not inherit them.
    public static var current: [String: String] {
        var result: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { result[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p += 1
        }
        for name in ownNames.withLock({ $0 }) { result[name] = nil }
        return result
    }

    private static let ownNames = Locked<[String]>([])

    /// Sets `name` for the libraries this process loads, unless the person set it already
    /// (theirs stays, and is passed on). Call before other threads start: `setenv` is not
    /// safe beside a `getenv` on another thread.
    public static func setForThisProcessOnly(_ name: String, _ value: String) {
        guard getenv(name) == nil, setenv(name, value, 0) == 0 else { return }
        ownNames.withLock { $0.append(name) }
    }
}
