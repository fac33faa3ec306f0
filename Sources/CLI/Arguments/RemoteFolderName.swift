import Platform
import Queue

/// What a folder on the server given by a person must be. Checked for `--to` while parsing,
/// and again for a folder typed into the share-to dialog.
enum RemoteFolderName {
    /// Why `folder` cannot be used, in one sentence, or nil when it can.
    static func problem(_ folder: String) -> String? {
        if folder.allSatisfy(\.isWhitespace) {
            return "the folder on the server is empty; give one, e.g. /Photos (or / for the top)"
        }
        if folder.split(separator: "/").contains(where: { $0.allSatisfy(\.isWhitespace) && !$0.isEmpty }) {
            return "the folder \(DisplayText.escape(folder)) has a part that is only spaces; name each folder"
        }
        if RemotePath.escapesRoot(folder) {
            return "the folder \(DisplayText.escape(folder)) has `..` in it, which is not taken; give its path from the top without it, e.g. /Photos"
        }
        return nil
    }
}
