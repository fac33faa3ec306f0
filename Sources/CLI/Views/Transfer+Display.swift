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
        // ASCII (every action this program writes) is read as bytes, each a character of its
        // own, a word's being letters, digits and `_`; other text as characters.
        enum Found { case nothing, replaced([UInt8]), notASCII }
        var bytes = text
        let found: Found = bytes.withUTF8 { b in
            func isWord(_ c: UInt8) -> Bool {
                (0x30...0x39).contains(c) || (0x41...0x5a).contains(c) || (0x61...0x7a).contains(c) || c == UInt8(ascii: "_")
            }
            var out: [UInt8] = []
            var copied = 0
            var i = 0
            while i < b.count {
                if b[i] >= 0x80 { return .notASCII }
                if b[i] == UInt8(ascii: "I"), i + 1 < b.count, b[i + 1] == UInt8(ascii: "D"),
                   i == 0 || !isWord(b[i - 1]), i + 2 >= b.count || !isWord(b[i + 2]) {
                    out += b[copied..<i]
                    out += String(id).utf8
                    i += 2
                    copied = i
                } else {
                    i += 1
                }
            }
            guard copied > 0 else { return .nothing }
            out += b[copied...]
            return .replaced(out)
        }
        switch found {
        case .nothing: return text
        case .replaced(let out): return String(decoding: out, as: UTF8.self)
        case .notASCII: break
        }
        let utf8 = text.utf8
        guard zip(utf8, utf8.dropFirst()).contains(where: { $0 == UInt8(ascii: "I") && $1 == UInt8(ascii: "D") }) else { return text }
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
