import Glibc
import Platform

/// Walks a folder given to a front door and collects every regular file in it, with its
/// path relative to the folder.
///
/// Links are followed, each folder is entered once: folders are known by device and inode,
/// so a link back to a folder above (a loop) or a second way into a folder already walked
/// is named and skipped instead of walked again. Pipes, sockets and devices are refused
/// with a message; the rest of the folder still goes.
struct FolderWalk {
    /// Every folder entered so far, with the path it was first entered by.
    private var visited: [FileIdentity: LocalPath] = [:]

    /// Adds the files below `folder` (whose remote components are `remote`) to `selection`.
    mutating func walk(_ folder: LocalPath, as remote: [String], into selection: inout Intake.Selection) {
        guard let id = try? FileIdentity.of(folder) else { return }
        var ancestors: Set<FileIdentity> = []
        walk(folder, id: id, remote: remote, ancestors: &ancestors, into: &selection)
    }

    private mutating func walk(_ folder: LocalPath, id: FileIdentity, remote: [String], ancestors: inout Set<FileIdentity>,
                               into selection: inout Intake.Selection) {
        if ancestors.contains(id) {
            selection.refused.append(Intake.Refusal(path: folder, problem: "is a link back to a folder it is inside of (a loop); its files are sent once, from the folder itself"))
            return
        }
        if let first = visited[id] {
            selection.refused.append(Intake.Refusal(path: folder, problem: "is the same folder as \(first.display), whose files are already being sent; not sent twice"))
            return
        }
        visited[id] = folder
        let names: [LocalPath]
        switch Self.entries(of: folder) {
        case .failure(let refusal):
            selection.refused.append(refusal)
            return
        case .success(let found):
            names = found
        }
        ancestors.insert(id)
        defer { ancestors.remove(id) }
        for name in names {
            let path = folder.appending(name)
            let components = remote + [name.text]
            if let st = try? FileIO.status(path), FileKind.of(mode: st.st_mode) == .directory {
                walk(path, id: FileIdentity(st), remote: components, ancestors: &ancestors, into: &selection)
                continue
            }
            switch Intake.check(path) {
            case .failure(let refusal): selection.refused.append(refusal)
            case .success(let fingerprint): selection.files.append(Intake.Selected(path: path, relative: components, fingerprint: fingerprint))
            }
        }
    }

    /// The names in `folder` (without `.` and `..`), sorted by their bytes so the queue's
    /// order does not depend on the file system's.
    static func entries(of folder: LocalPath) -> Result<[LocalPath], Intake.Refusal> {
        var names: [LocalPath] = []
        do throws(SystemError) {
            let open = try OpenFolder(folder)
            while let entry = try open.next() { names.append(LocalPath(bytes: entry.name)) }
        } catch {
            return .failure(Intake.Refusal(path: folder, problem: LocalFileWords.unlistableFolder(error.errno) + "; nothing in it was sent"))
        }
        return .success(names.sorted())
    }
}
