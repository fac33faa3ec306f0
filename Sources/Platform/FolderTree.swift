import Glibc

/// A walk over a folder tree: the one way the program goes through folders, for a folder a
/// person hands over (`upload FOLDER`, share-to) and for a watched folder alike.
///
/// Depth first, each folder's names in the order of their bytes (so what is queued does not
/// depend on the file system's order); one `readdir` per folder and one `fstatat` per name
/// relative to the open folder (`OpenFolder`: no path lookups). Each folder is entered once,
/// known by device and inode: a link back to a folder above (a loop) or a second way into a
/// folder already walked (a second link, a bind mount) is reported, never walked again.
///
/// Symbolic links follow the policy `FileFingerprint` states:
/// below a folder a person named they are followed (the link is what they meant); below a
/// watched folder they are not looked at (a link into the rest of the disk would send it).
/// The root itself may be a link either way.
public struct FolderTree {
    public enum Links: Sendable {
        /// Followed to what they point at: a file is that file, a folder is walked.
        case followed
        /// Left out, unlooked at.
        case skipped
    }

    public var links: Links
    /// Whether the root may be a symbolic link to the folder (a rule's folder may; a
    /// subfolder walked on its own below a watched folder may not).
    public var followsRootLink = true
    /// Folders deeper than this below the root are reported (`tooDeep`), not entered.
    public var maximumDepth = 64
    /// Names left out before anything is asked about them (hidden and temporary names),
    /// given with the folder they are in.
    public var skips: (_ folder: LocalPath, _ name: [UInt8]) -> Bool = { _, _ in false }
    /// Every folder entered so far, by this walk or an earlier one of this value, with the
    /// path it was first entered by: two roots that overlap are walked once.
    private var visited: [FileIdentity: LocalPath] = [:]

    public init(links: Links) { self.links = links }

    public enum Event {
        /// A folder, `depth` below the root, about to be listed: a watch placed now misses
        /// nothing the listing does not show.
        case folder(LocalPath, depth: Int)
        /// A name that is not a folder, in the folder `depth` below the root, with its status
        /// (its target's, for a followed link): a regular file, a pipe, a socket, a device.
        case entry(LocalPath, stat, depth: Int)
        /// A folder reached again: inside itself (`loop`), or already walked as `first`.
        case repeated(LocalPath, first: LocalPath, loop: Bool)
        /// A folder not entered because it is more than `maximumDepth` below the root.
        case tooDeep(LocalPath)
        /// A folder that could not be opened or listed (`depth` its own), or a name that could
        /// not be looked at (a followed link that points nowhere, a file gone meanwhile;
        /// `depth` its folder's).
        case problem(LocalPath, SystemError, isFolder: Bool, depth: Int)
    }

    /// Walks the tree below `root`, telling `visit` what it finds.
    public mutating func walk(_ root: LocalPath, _ visit: (Event) -> Void) {
        var walker = Walker(tree: self, visited: visited)
        walker.enter(root, depth: 0, visit)
        visited = walker.visited
    }

    private struct Walker {
        let tree: FolderTree
        var visited: [FileIdentity: LocalPath]
        /// The folders the walk is inside of now.
        var ancestors: Set<FileIdentity> = []

        mutating func enter(_ path: LocalPath, depth: Int, _ visit: (Event) -> Void) {
            let folder: OpenFolder
            do throws(SystemError) {
                folder = try OpenFolder(path, followingLink: depth == 0 ? tree.followsRootLink : tree.links == .followed)
            } catch {
                visit(.problem(path, error, isFolder: true, depth: depth))
                return
            }
            if let first = visited[folder.identity] {
                visit(.repeated(path, first: first, loop: ancestors.contains(folder.identity)))
                return
            }
            visited[folder.identity] = path
            visit(.folder(path, depth: depth))
            var entries: [OpenFolder.Entry] = []
            do throws(SystemError) {
                while let entry = try folder.next() {
                    if !tree.skips(path, entry.name) { entries.append(entry) }
                }
            } catch {
                visit(.problem(path, error, isFolder: true, depth: depth))
                return
            }
            entries.sort { $0.name.lexicographicallyPrecedes($1.name) }
            ancestors.insert(folder.identity)
            defer { ancestors.remove(folder.identity) }
            for entry in entries {
                look(at: entry, in: folder, depth: depth, visit)
            }
        }

        private mutating func look(at entry: OpenFolder.Entry, in folder: OpenFolder, depth: Int, _ visit: (Event) -> Void) {
            var type = entry.type
            // A link below a watched folder is not even named.
            if type == UInt8(DT_LNK), tree.links == .skipped { return }
            let path = folder.path.appending(LocalPath(bytes: entry.name))
            var status: stat?
            if type == UInt8(DT_LNK) {
                do throws(SystemError) { status = try FileIO.status(path) } catch {
                    visit(.problem(path, error, isFolder: false, depth: depth))
                    return
                }
                type = FileKind.of(mode: status!.st_mode) == .directory ? UInt8(DT_DIR) : UInt8(DT_REG)
            } else if type != UInt8(DT_DIR) {
                // Some file systems leave d_type unknown; the name's own status says what it is.
                do throws(SystemError) { status = try folder.status(of: entry.name) } catch {
                    visit(.problem(path, error, isFolder: false, depth: depth))
                    return
                }
                switch FileKind.of(mode: status!.st_mode) {
                case .directory: type = UInt8(DT_DIR)
                case _ where status!.st_mode & S_IFMT == S_IFLNK:
                    // A link the folder did not type (DT_UNKNOWN): as any link.
                    look(at: OpenFolder.Entry(name: entry.name, type: UInt8(DT_LNK)), in: folder, depth: depth, visit)
                    return
                default: type = UInt8(DT_REG)
                }
            }
            if type == UInt8(DT_DIR) {
                if depth < tree.maximumDepth { enter(path, depth: depth + 1, visit) } else { visit(.tooDeep(path)) }
            } else if let status {
                visit(.entry(path, status, depth: depth))
            }
        }
    }
}

extension FolderTree {
    /// The regular files below `root` whose whole fingerprints are among `sought`, the first
    /// found of each, in the order of the walk: where files known by their fingerprints are
    /// now (a rename keeps a file's size and time). A file `except` says is not the one
    /// sought (the name it is known at) does not count, and the walk looks on.
    public mutating func files(in root: LocalPath, matching sought: Set<FileFingerprint>,
                               except: (LocalPath, FileFingerprint) -> Bool = { _, _ in false })
        -> [(path: LocalPath, fingerprint: FileFingerprint)] {
        var found: [(path: LocalPath, fingerprint: FileFingerprint)] = []
        var left = sought
        guard !left.isEmpty else { return found }
        walk(root) { event in
            guard case .entry(let candidate, let st, _) = event, FileKind.of(mode: st.st_mode) == .regular else { return }
            let fingerprint = FileFingerprint(st)
            guard left.contains(fingerprint), !except(candidate, fingerprint) else { return }
            left.remove(fingerprint)
            found.append((candidate, fingerprint))
        }
        return found
    }
}
