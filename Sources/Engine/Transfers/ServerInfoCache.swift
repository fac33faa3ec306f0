import Glibc
import Platform
import Queue
import Transport

/// What servers said about themselves, remembered for the agent's lifetime, and what was
/// in their folders a moment ago.
public final class ServerInfoCache: Sendable {
    private let entries = Locked<[String: UploadCapabilities]>([:])
    /// Folders listed or made, by the tree they are in (`UploadJob.folderKey`) and path.
    private let folders = Locked<[String: KnownFolder]>([:])
    public init() {}

    /// A folder as the server listed it (or as it was made): when (`MonotonicClock` seconds),
    /// for how long it is used, and the paths in it then, with those this agent made there
    /// since. No names when the listing was too long to keep.
    struct KnownFolder {
        var seen: Double
        var lifetime: Double
        var paths: FolderNames?
    }

    /// A folder's listing is used this long at least: a batch of photos into one folder asks
    /// about the folder once, not once per photo. A stale listing costs requests, never a
    /// file: a name it shows is looked at again before it is avoided, and one it does not
    /// show is made by a request that refuses to replace (the upload's own check), so a file
    /// saved there by someone else meanwhile is found then. A folder removed meanwhile is
    /// made again when the upload is refused as missing (404, 409, oCIS's 412), and
    /// forgotten here.
    static let folderLifetime = 30.0
    /// A listing the server took long to send is used for that many times as long (up to
    /// `tooLongLifetime`): a folder of tens of thousands of photos is not listed again and
    /// again through a long batch.
    static let lifetimePerSecondListing = 30.0
    /// Listings longer than this are not kept, and stop being read there: files into such a
    /// folder are each looked at on their own, as without a listing. Kept, each name costs 8
    /// bytes (`FolderNames`).
    static let maxKeptNames = 100_000
    /// A folder found too long to keep is not listed again for this long: each listing of it
    /// costs the server a reply of that length, for nothing.
    static let tooLongLifetime = 600.0
    /// Listings at least this long give their memory back once read and let go.
    static let givesBackFrom = 1_000

    /// A folder is listed or made one at a time, so the uploads that start together into one
    /// folder list it once (the others find it known when their turn comes), and a slow
    /// server holds up only the uploads into that folder.
    private let listing = OneAtATime<String>()

    /// Whether the file at `path` in `folder` of `tree` may be there: the folder's listing
    /// (still in its lifetime, else made now by `list`, one at a time, and remembered) shows
    /// it, or was too long to keep (`list` answers nil).
    func mayHold(_ path: String, in folder: String, of tree: String, list: () throws -> FolderNames?) throws -> Bool {
        guard let paths = try paths(in: folder, of: tree, list: list) else { return true }
        return paths.contains(WebDAVPath.normalize(path))
    }

    private func paths(in folder: String, of tree: String, list: () throws -> FolderNames?) throws -> FolderNames? {
        if let known = known(folder, of: tree) { return known.paths }
        let (paths, count) = try listing.run(Self.key(folder, tree)) { () throws -> (FolderNames?, Int) in
            if let known = known(folder, of: tree) { return (known.paths, 0) }
            let started = MonotonicClock.seconds()
            let listed = try list()
            let now = MonotonicClock.seconds()
            let lifetime = listed == nil ? Self.tooLongLifetime
                : min(Self.tooLongLifetime, max(Self.folderLifetime, (now - started) * Self.lifetimePerSecondListing))
            remember(folder, of: tree, KnownFolder(seen: now, lifetime: lifetime, paths: listed))
            return (listed, listed?.count ?? Self.maxKeptNames)
        }
        // Once the listing's reading is let go, and the folder's other uploads no longer wait.
        if count >= Self.givesBackFrom { MallocTuning.giveBackFreed() }
        return paths
    }

    /// A file this agent made in a folder it remembers: the next upload of that name looks at it.
    func noteMade(_ path: String, in folder: String, of tree: String) {
        folders.withLock { known in
            _ = known[Self.key(folder, tree)]?.paths?.insert(WebDAVPath.normalize(path))
        }
    }

    func forgetFolder(_ folder: String, of tree: String) {
        _ = folders.withLock { $0.removeValue(forKey: Self.key(folder, tree)) }
    }

    private func known(_ folder: String, of tree: String) -> KnownFolder? {
        let now = MonotonicClock.seconds()
        return folders.withLock { known in
            guard let folder = known[Self.key(folder, tree)], now - folder.seen < folder.lifetime else { return nil }
            return folder
        }
    }

    private func remember(_ folder: String, of tree: String, _ entry: KnownFolder) {
        folders.withLock { known in
            // Stale listings are let go as new ones come, so a long-running agent keeps only
            // the few it uses (each may hold up to `maxKeptNames` names).
            if known.count > 8 { known = known.filter { entry.seen - $0.value.seen < $0.value.lifetime } }
            known[Self.key(folder, tree)] = entry
        }
    }

    private static func key(_ folder: String, _ tree: String) -> String { tree + "\u{0}" + folder }
    public func info(for endpoint: String, discover: () throws -> UploadCapabilities) throws -> UploadCapabilities {
        if let known = entries.withLock({ $0[endpoint] }) { return known }
        let info = try discover()
        entries.withLock { $0[endpoint] = info }
        return info
    }
    public func forget(_ endpoint: String) { _ = entries.withLock { $0.removeValue(forKey: endpoint) } }
}
