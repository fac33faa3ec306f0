/// Fitting text into a terminal: wrapping, truncating, two-column tables.
///
/// Widths count `Character`s. East Asian wide characters take two cells and are counted
/// as one; lines with them may run a little long, which is ugly but never hides text.
enum TextLayout {
    /// Wraps at spaces so no line exceeds `width` unless one word alone does; each line
    /// after the first starts with `indent`, and the first with `firstIndent`.
    static func wrap(_ text: String, width: Int, indent: String = "", firstIndent: String? = nil) -> String {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let first = lines.isEmpty ? (firstIndent ?? indent) : indent
            if first.count + paragraph.count <= width {
                lines.append(first + paragraph)  // fits: keep its spacing as written
                continue
            }
            var line = lines.isEmpty ? (firstIndent ?? indent) : indent
            var lineHasWord = false
            for word in paragraph.split(separator: " ") {
                if lineHasWord, line.count + 1 + word.count > width {
                    lines.append(line)
                    line = indent
                    lineHasWord = false
                }
                line += (lineHasWord ? " " : "") + word
                lineHasWord = true
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

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
