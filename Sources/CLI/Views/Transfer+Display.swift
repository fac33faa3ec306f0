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

    /// The name for programs: real text, invalid UTF-8 replaced, nothing escaped.
    var plainName: String { direction == .upload ? localPath.lastComponent.text : remoteName }

    /// For an upload whose local name is not UTF-8 text: the name the server stores instead,
    /// said out loud (a server keeps names as text, so such bytes become U+FFFD there).
    var nameNote: String? {
        guard direction == .upload, String(validating: localPath.lastComponent.bytes, as: UTF8.self) == nil else { return nil }
        return "named \(DisplayText.escape(remoteName)) on the server, which takes only UTF-8 names"
    }

    /// What the person should know that is not a reason: the name the server stores
    /// (`nameNote`), and why a watch rule took the file as it was (`Transfer.takenNote`).
    /// As text, for JSON; `shownNotes` for a terminal.
    var notes: [String] { [nameNote, takenNote].compactMap(\.self) }

    /// `notes` with control characters escaped (a name in `nameNote` is escaped already).
    var shownNotes: [String] { notes.map(DisplayText.escapeControls) }

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

    /// Replaces the word `ID` (not `IDs`, not `VALID`) with `id`. `ID` is looked for by its
    /// bytes; only where they are found do the characters around them decide: `D` a whole
    /// character (no mark on it), and no letter, digit or `_` on either side.
    static func substituteID(in text: String, id: Int64) -> String {
        guard text.containsUTF8Byte(UInt8(ascii: "I")) else { return text }
        // In ASCII each byte is a character (`\r\n` is no letter either way): the bytes
        // around `ID` decide, without reading characters.
        let ascii = text.everyUTF8Byte { $0 < 0x80 }
        func isWord(_ c: Character?) -> Bool { c.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false }
        func isWordByte(_ b: UInt8) -> Bool {
            b == UInt8(ascii: "_") || (0x30...0x39).contains(b) || (0x41...0x5a).contains(b) || (0x61...0x7a).contains(b)
        }
        let bytes = text.utf8
        var out = ""
        var kept = text.startIndex
        var i = bytes.startIndex
        while i != bytes.endIndex {
            let d = bytes.index(after: i)
            guard bytes[i] == UInt8(ascii: "I"), d != bytes.endIndex, bytes[d] == UInt8(ascii: "D") else { i = d; continue }
            let end = bytes.index(after: d)
            let isTheWord = ascii
                ? (i == bytes.startIndex || !isWordByte(bytes[bytes.index(before: i)])) && (end == bytes.endIndex || !isWordByte(bytes[end]))
                : text[d...].first == "D" && !isWord(text[..<i].last) && !isWord(text[end...].first)
            if isTheWord {
                out += text[kept..<i]
                out += String(id)
                kept = end
                i = end
            } else {
                i = d
            }
        }
        guard kept != text.startIndex else { return text }
        out += text[kept...]
        return out
    }
}
