import Glibc
import Platform

/// Walks a folder given to a front door and collects every regular file in it, with its
/// path relative to the folder (`FolderTree`, links followed: a link is what the person meant).
///
/// A link back to a folder above (a loop) or a second way into a folder already walked, in
/// this folder or one given beside it, is named and skipped instead of walked again. Pipes,
/// sockets and devices are refused with a message; the rest of the folder still goes.
struct FolderWalk {
    private var tree = FolderTree(links: .followed)

    /// Adds the files below `folder` (whose remote components are `remote`) to `selection`.
    mutating func walk(_ folder: LocalPath, as remote: [String], into selection: inout Intake.Selection) {
        // The remote components of the folders the walk is in, by depth.
        var components: [[String]] = []
        let maximumDepth = tree.maximumDepth
        tree.walk(folder) { event in
            switch event {
            case .folder(let path, let depth):
                components.removeSubrange(min(depth, components.count)...)
                components.append(depth == 0 ? remote : components[depth - 1] + [path.lastComponent.text])
            case .entry(let path, _, let depth), .problem(let path, _, isFolder: false, let depth):
                // Intake.check looks at the file once more and says, in the person's words,
                // what is wrong with one that is not a regular file or cannot be read.
                switch Intake.check(path) {
                case .failure(let refusal): selection.refused.append(refusal)
                case .success(let fingerprint):
                    selection.files.append(Intake.Selected(path: path, relative: components[depth] + [path.lastComponent.text],
                                                           fingerprint: fingerprint))
                }
            case .repeated(let path, let first, let loop):
                selection.refused.append(Intake.Refusal(path: path, problem: loop
                    ? "is a link back to a folder it is inside of (a loop); its files are sent once, from the folder itself"
                    : "is the same folder as \(first.display), whose files are already being sent; not sent twice"))
            case .tooDeep(let path):
                selection.refused.append(Intake.Refusal(path: path, problem: "is more than \(maximumDepth) folders deep; nothing in it was sent"))
            case .problem(let path, let error, isFolder: true, _):
                selection.refused.append(Intake.Refusal(path: path, problem: LocalFileWords.unlistableFolder(error.errno) + "; nothing in it was sent"))
            }
        }
    }
}
