import Platform
import Queue
import Transport

/// The look at the server before a new upload is created. Servers overwrite a file that
/// is already at an upload's path (Nextcloud, oCIS), so the agent itself makes sure it
/// never replaces a different file. A batch into one folder lists the folder once
/// (`PROPFIND Depth: 1`, remembered in `ServerInfoCache`) instead of asking about each name;
/// a name the listing shows is asked about on its own, just before:
/// - nothing there: the upload goes to the path, after the folders it needs are created;
/// - the same bytes there (same size and SHA-256, as the server reports it): nothing to send;
/// - anything else there (different, or a server without checksums, or a folder), or an
///   older or already sending upload in the queue headed for the same path: the next free
///   `name (1).ext`, `name (2).ext`, ..., chosen here and recorded in the row; a numbered
///   name on the way that holds the same bytes is this file already there (this row's own
///   upload, whose record of the name a power cut took back, is found there so).
struct TargetCheck {
    let dav: WebDAVClient
    let store: QueueStore
    let row: Transfer
    /// Where folders the server showed a moment ago are remembered, and the tree they are in.
    var folders: (cache: ServerInfoCache, tree: String)?
    /// The name free on the server is claimed later, in the commit that records the file
    /// being made (a direct PUT, which writes nothing to the row before it).
    var claimsLater = false

    enum Verdict: Equatable {
        /// The server already holds the file at `path` (its SHA-256), which the row now records.
        case alreadyThere(path: String, sha256: String)
        /// Upload to this path, which the row now records.
        case uploadTo(String)
    }

    /// `digest` reads the local file's SHA-256; it is called only when a file of the same
    /// size with a server checksum is in the way.
    func verdict(size: Int64, digest: () throws -> String) throws -> Verdict {
        let wanted = row.remotePath
        var known: String?
        func isOurs(_ item: RemoteItem) throws -> Bool {
            guard !item.isFolder, item.size == size, let theirs = item.sha256 else { return false }
            if known == nil { known = try digest() }
            return theirs == known
        }
        if let existing = try lookAt(wanted) {
            if try isOurs(existing) { return .alreadyThere(path: wanted, sha256: existing.sha256 ?? "") }
        } else {
            // A listing came from the folder, or made it; without one the folder is made here.
            if folders == nil { try makeFolders(row.remoteFolder) }
            if claimsLater { return .uploadTo(wanted) }
            if try store.claimRemotePath(row.id, wanted, accountID: row.accountID, claimants: .olderOrStarted) { return .uploadTo(wanted) }
        }
        let verdict = try nextName(instead: wanted, recognising: true, isOurs: isOurs)
        if case .uploadTo(let chosen) = verdict {
            Log.info("upload \(row.id): \(wanted) is taken on the server; sending it as \(chosen)")
        }
        return verdict
    }

    /// What is at `path` in the row's folder: nothing when the folder's listing does not show
    /// it, else what the server says about it now.
    private func lookAt(_ path: String) throws -> RemoteItem? {
        if let folders, try !folders.cache.mayHold(path, in: row.remoteFolder, of: folders.tree, list: listFolder) {
            return nil
        }
        return try item(at: path)
    }

    private func item(at path: String) throws -> RemoteItem? {
        do { return try dav.properties(of: path) } catch let e as HTTPStatusError where e.status == 404 { return nil }
    }

    /// The paths in the row's folder, read as the reply comes; nil for a folder with more
    /// than `ServerInfoCache.maxKeptNames`, whose listing stops there. A missing folder is
    /// made (with its parents), empty.
    private func listFolder() throws -> FolderNames? {
        do {
            var hashes: [UInt64] = []
            let whole = try dav.eachItem(in: row.remoteFolder, details: false) { item in
                guard hashes.count < ServerInfoCache.maxKeptNames else { return false }
                hashes.append(FolderNames.hash(item.path))
                return true
            }
            return whole ? FolderNames(hashes: hashes) : nil
        } catch let e as HTTPStatusError where e.status == 404 {
            try makeFolders(row.remoteFolder)
            return FolderNames(hashes: [])
        } catch let e as WrongRemoteKind {
            throw Self.cannotMake(e)
        }
    }

    /// The first `name (n).ext` that is neither on the server nor headed for by another row,
    /// claimed for this row.
    func freeName(instead path: String) throws -> String {
        switch try nextName(instead: path, recognising: false, isOurs: { _ in false }) {
        case .uploadTo(let chosen), .alreadyThere(let chosen, _): return chosen
        }
    }

    /// The same; `recognising`, a name on the way whose file `isOurs` recognises as this one
    /// (by the server's checksum) is claimed as the file already there.
    private func nextName(instead path: String, recognising: Bool, isOurs: (RemoteItem) throws -> Bool) throws -> Verdict {
        let name = String(path.split(separator: "/").last ?? "")
        for counter in 1...Self.maxCounter {
            let candidate = RemotePath.join(row.remoteFolder, DownloadName.numbered(name, counter))
            if try store.isRemotePathClaimed(candidate, accountID: row.accountID, byOtherThan: row.id) { continue }
            if recognising {
                if let there = try item(at: candidate) {
                    if try isOurs(there), try store.claimRemotePath(row.id, candidate, accountID: row.accountID) {
                        return .alreadyThere(path: candidate, sha256: there.sha256 ?? "")
                    }
                    continue
                }
            } else if try dav.exists(candidate) {
                continue
            }
            if try store.claimRemotePath(row.id, candidate, accountID: row.accountID) { return .uploadTo(candidate) }
        }
        throw Classified(Reason(.targetMissing, "no free name for \(name) in \(row.remoteFolder) on the server (tried \(Self.maxCounter))",
                                action: "make room there, or choose another folder: `instant-upload retry ID --to DIR`"))
    }

    static let maxCounter = 1000

    /// Creates the folder and any missing parent. A folder that cannot be made (a file in
    /// its place, no permission) is the row's own problem: it fails as `target_missing`.
    private func makeFolders(_ folder: String) throws {
        do {
            try dav.makeFolders(folder)
        } catch let e as WrongRemoteKind {
            throw Self.cannotMake(e)
        } catch let e as HTTPStatusError where e.step == .mkcol && [403, 405, 409].contains(e.status) {
            throw Classified(Reason(.targetMissing, "the folder \(folder) cannot be created on the server (\(e.status))",
                                    detail: e.serverMessage))
        }
    }

    private static func cannotMake(_ e: WrongRemoteKind) -> Classified {
        Classified(Reason(.targetMissing, "the folder cannot be created: \(e.description)"))
    }
}
