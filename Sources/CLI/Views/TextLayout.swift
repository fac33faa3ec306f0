/// Fitting text into a terminal: wrapping, truncating, two-column tables.
///
/// Widths count `Character`s. East Asian wide characters take two cells and are counted
/// as one; lines with them may run a little long, which is ugly but never hides text.
enum TextLayout {
    /// Wraps at spaces so no line exceeds `width` unless one word alone does; each line
    /// after the first starts with `indent`, and the first with `firstIndent`.
    static func wrap(_ text: String, width: Int, indent: String = "", firstIndent: String? = nil) -> String {
        // Most lines fit, and a line's bytes bound its characters: counting bytes costs nothing.
        let lead = firstIndent ?? indent
        if lead.utf8.count + text.utf8.count <= width, !text.containsUTF8Byte(UInt8(ascii: "\n")) { return lead + text }
        // In ASCII without a carriage return every byte is a character: split and counted as
        // bytes.
        let ascii = isPlainASCII(text) && isPlainASCII(indent) && isPlainASCII(lead)
        func length(_ s: some StringProtocol) -> Int { ascii ? s.utf8.count : s.count }
        func split(_ s: Substring, at separator: Character, omittingEmpty: Bool) -> [Substring] {
            guard ascii else { return s.split(separator: separator, omittingEmptySubsequences: omittingEmpty) }
            return s.utf8.split(separator: separator.asciiValue!, omittingEmptySubsequences: omittingEmpty).map(Substring.init)
        }
        var lines: [String] = []
        for paragraph in split(text[...], at: "\n", omittingEmpty: false) {
            let first = lines.isEmpty ? (firstIndent ?? indent) : indent
            if length(first) + length(paragraph) <= width {
                lines.append(first + paragraph)  // fits: keep its spacing as written
                continue
            }
            var line = lines.isEmpty ? (firstIndent ?? indent) : indent
            var lineWidth = length(line) // counted as it grows: a line's count is a walk over it
            var lineHasWord = false
            for word in split(paragraph, at: " ", omittingEmpty: true) {
                let wordWidth = length(word)
                if lineHasWord, lineWidth + 1 + wordWidth > width {
                    lines.append(line)
                    line = indent
                    lineWidth = length(indent)
                    lineHasWord = false
                }
                if lineHasWord {
                    line += " "
                    lineWidth += 1
                }
                line += word
                lineWidth += wordWidth
                lineHasWord = true
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// Characters in `text`: its bytes when it is ASCII without a carriage return (`\r\n` is
    /// one character), which is most names and every sentence of this program.
    static func length(_ text: String) -> Int { isPlainASCII(text) ? text.utf8.count : text.count }

    static func isPlainASCII(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy(isPlainASCII)
    }

    static func isPlainASCII(_ text: String) -> Bool { text.everyUTF8Byte(isPlainASCII) }

    private static func isPlainASCII(_ byte: UInt8) -> Bool { byte < 0x80 && byte != UInt8(ascii: "\r") }

    /// Shortens `text` to `width` characters by cutting its middle, so the start and the
    /// extension of a file name both stay visible.
    static func truncateMiddle(_ text: String, to width: Int) -> String {
        guard text.count > width else { return text }
        guard width > 1 else { return String(text.prefix(width)) }
        let keep = width - 1
        let head = (keep + 1) / 2
        return String(text.prefix(head)) + "…" + String(text.suffix(keep - head))
    }

    /// Shortens `text` to `width` characters by cutting its start, for folders whose last
    /// part says the most (`…/2026/Holiday`).
    static func truncateStart(_ text: String, to width: Int) -> String {
        guard text.count > width else { return text }
        guard width > 1 else { return String(text.suffix(width)) }
        return "…" + String(text.suffix(width - 1))
    }

    /// Shortens `text` to `width` characters, ending with `…` when cut.
    static func truncateEnd(_ text: String, to width: Int) -> String {
        guard text.count > width else { return text }
        guard width > 1 else { return String(text.prefix(width)) }
        return String(text.prefix(width - 1)) + "…"
    }

    /// Terminal cells `text` takes: two for wide characters (CJK, most emoji), none for a
    /// character that only combines, one for the rest. Control characters are never here:
    /// names are escaped before they are laid out.
    static func cells(_ text: String) -> Int { text.reduce(0) { $0 + cells($1) } }

    static func cells(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if character.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation }) { return 2 }
        if character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) && first.properties.isEmoji { return 2 }
        if isWide(first.value) { return 2 }
        if first.properties.generalCategory == .nonspacingMark || first.properties.generalCategory == .enclosingMark { return 0 }
        return 1
    }

    /// East Asian Wide and Fullwidth blocks (UAX #11), the ones names actually use.
    static func isWide(_ v: UInt32) -> Bool {
        (0x1100...0x115F).contains(v) || (0x2E80...0x303E).contains(v) || (0x3041...0x33FF).contains(v)
            || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v) || (0xA000...0xA4CF).contains(v)
            || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v)
            || (0xFF00...0xFF60).contains(v) || (0xFFE0...0xFFE6).contains(v) || (0x20000...0x3FFFD).contains(v)
    }

    /// `text` cut to at most `width` terminal cells, ending with `…` when cut: a line that
    /// never wraps, so a live view never grows past the screen.
    static func clip(_ text: String, cells width: Int) -> String {
        guard width > 0 else { return "" }
        if text.unicodeScalars.allSatisfy({ $0.isASCII }) {
            return text.count <= width ? text : String(text.prefix(width - 1)) + "…"
        }
        guard cells(text) > width else { return text }
        var out = ""
        var used = 0
        for character in text {
            let w = cells(character)
            if used + w > width - 1 { break }
            out.append(character)
            used += w
        }
        return out + "…"
    }

    static func pad(_ text: String, to width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func padLeft(_ text: String, to width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    /// Two columns, the second wrapped beside the first; a first column wider than a third
    /// of the line puts its text on the next line instead.
    /// `column` fixes the first column's width (text included) so that separate tables align.
    static func table(_ rows: [(String, String)], width: Int, indent: Int = 2, column fixed: Int? = nil) -> String {
        let cap = max(12, width / 3)
        let column = fixed ?? (min(cap, rows.map(\.0.count).max() ?? 0) + 2)
        let lead = String(repeating: " ", count: indent)
        let hanging = String(repeating: " ", count: indent + column)
        return rows.map { left, right in
            let textWidth = max(20, width - indent - column)
            let body = wrap(right, width: textWidth).split(separator: "\n", omittingEmptySubsequences: false)
                .joined(separator: "\n" + hanging)
            if left.count + 2 > column { return lead + left + "\n" + hanging + body }
            return lead + pad(left, to: column) + body
        }.joined(separator: "\n")
    }
}
