import FoundationEssentials
import Platform
import Queue

/// Pieces of a transfer as the views print them; every name from disk or server is escaped.
extension Transfer {
    /// `alice:/Photos`: the remote folder with the account, as the seeds' uploads view names it.
    var remoteFolderText: String { accountPrefix + DisplayText.escape(remoteFolder) }

    /// `alice:/Photos/IMG_0042.jpg`.
    var remotePathText: String { accountPrefix + DisplayText.escape(remotePath) }

    /// `alice:`, or nothing for a row without an account name.
    var accountPrefix: String { accountName.isEmpty ? "" : DisplayText.escape(accountName) + ":" }

    /// `to` for uploads, `from` for downloads: the word before `remoteFolderText`.
    var routeWord: String { direction == .upload ? "to" : "from" }

    /// The last part of the remote path, as the server names the file.
    var remoteName: String { String(remotePath.split(separator: "/").last ?? Substring(remotePath)) }

    /// The name for programs: real text, invalid UTF-8 replaced, nothing escaped.
    var plainName: String { direction == .upload ? localPath.lastComponent.text : remoteName }

    /// For an upload whose local name is not UTF-8 text: the name the server stores instead,
    /// said out loud (a server keeps names as text, so such bytes become U+FFFD there).
    var nameNote: String? {
        guard direction == .upload, String(validating: localPath.lastComponent.bytes, as: UTF8.self) == nil else { return nil }
        return "named \(DisplayText.escape(remoteName)) on the server, which takes only UTF-8 names"
    }

    /// For a new version of a file on the server (a downloaded file edited here): which file,
    /// or, once the server's copy turned out changed, where this version went instead.
    var versionNote: String? {
        guard let of = newVersionOf else { return nil }
        let original = accountPrefix + DisplayText.escape(of)
        if of == remotePath { return "new version of \(original)" }
        return "\(original) had changed on the server since it was downloaded: this version "
            + (state == .completed ? "went" : "goes") + " beside it as a conflicted copy, the server's copy is left alone"
    }

    /// The reason's action with `ID` replaced by this row's number, ready to copy.
    func actionText(_ reason: Reason) -> String { Self.substituteID(in: reason.action, id: id) }

    /// The upload URL's host, never its path, query or credentials.
    var uploadHost: String? {
        guard let uploadURL, let host = URLComponents(string: uploadURL)?.host, !host.isEmpty else { return nil }
        return host
    }

    /// Replaces the word `ID` (not `IDs`, not `VALID`) with `id`.
    static func substituteID(in text: String, id: Int64) -> String {
        let bytes = text.utf8
        guard zip(bytes, bytes.dropFirst()).contains(where: { $0 == UInt8(ascii: "I") && $1 == UInt8(ascii: "D") }) else { return text }
        let chars = Array(text)
        var out = ""
        var i = 0
        func isWord(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }
        while i < chars.count {
            if chars[i] == "I", i + 1 < chars.count, chars[i + 1] == "D",
               i == 0 || !isWord(chars[i - 1]), i + 2 >= chars.count || !isWord(chars[i + 2]) {
                out += String(id)
                i += 2
            } else {
                out.append(chars[i])
                i += 1
            }
        }
        return out
    }
}
