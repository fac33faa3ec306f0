import Glibc
import Platform
import Queue
import Transport

/// What servers said about themselves, remembered for the agent's lifetime, and which of
/// their folders were there a moment ago.
public final class ServerInfoCache: Sendable {
    private let entries = Locked<[String: UploadCapabilities]>([:])
    /// Folders seen or made, by server and path, with when (`MonotonicClock` seconds).
    private let folders = Locked<[String: Double]>([:])
    public init() {}

    /// A folder is believed to be there this long after the server showed or made it: a
    /// batch of photos into one folder asks about it once, not once per photo. A folder
    /// removed meanwhile costs nothing worse than before: the upload's refusal (404, 409)
    /// makes the job forget it, make it again and ask where the upload stands.
    static let folderLifetime = 30.0

    /// Held while a folder not known yet is looked at or made, so the uploads that start
    /// together into a new folder make it once: the others find it known when they get here.
    private let makingFolders = Locked(())

    /// Runs `make` unless `folder` is known on `server`, one at a time, and remembers the
    /// folder once `make` returns.
    func ensureFolder(_ folder: String, on server: String, make: () throws -> Void) throws {
        if isFolderKnown(folder, on: server) { return }
        try makingFolders.withLock { _ in
            if isFolderKnown(folder, on: server) { return }
            try make()
            noteFolder(folder, on: server)
        }
    }

    func isFolderKnown(_ folder: String, on server: String) -> Bool {
        let now = MonotonicClock.seconds()
        return folders.withLock { known in
            guard let seen = known[Self.key(folder, server)] else { return false }
            return now - seen < Self.folderLifetime
        }
    }

    func noteFolder(_ folder: String, on server: String) {
        let now = MonotonicClock.seconds()
        folders.withLock { known in
            // Forgotten when stale, so a long-running agent keeps only what it uses.
            if known.count > 4096 { known = known.filter { now - $0.value < Self.folderLifetime } }
            known[Self.key(folder, server)] = now
        }
    }

    func forgetFolder(_ folder: String, on server: String) {
        _ = folders.withLock { $0.removeValue(forKey: Self.key(folder, server)) }
    }

    private static func key(_ folder: String, _ server: String) -> String { server + "\u{0}" + folder }
    public func info(for endpoint: String, discover: () throws -> UploadCapabilities) throws -> UploadCapabilities {
        if let known = entries.withLock({ $0[endpoint] }) { return known }
        let info = try discover()
        entries.withLock { $0[endpoint] = info }
        return info
    }
    public func forget(_ endpoint: String) { _ = entries.withLock { $0.removeValue(forKey: endpoint) } }
}
