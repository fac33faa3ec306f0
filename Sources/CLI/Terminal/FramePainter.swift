/// Turns successive frames into the least a terminal needs to show them: only lines that
/// changed are written, each after clearing its row, and rows the new frame no longer uses
/// are cleared, so a shorter line never leaves the end of a longer one behind.
///
/// Pure: it returns the bytes to write, in one piece, so a frame is never seen half drawn.
struct FramePainter {
    /// What the screen shows now, by row.
    private(set) var shown: [String] = []

    /// The escape sequences and text that turn the screen from `shown` into `lines`.
    mutating func paint(_ lines: [String]) -> String {
        var out = ""
        for (row, line) in lines.enumerated() where row >= shown.count || shown[row] != line {
            // Clear the whole row first: clearing after the text would erase the last cell
            // of a line exactly as wide as the screen (the cursor waits there to wrap).
            out += Escape.moveTo(row: row) + Escape.clearLine + line
        }
        if lines.count < shown.count {
            out += Escape.moveTo(row: lines.count) + Escape.clearToEnd
        }
        shown = lines
        return out
    }

    /// Forgets the screen (after a resize, or coming back from a suspend): the next frame is
    /// drawn whole on a cleared screen.
    mutating func clear() -> String {
        shown = []
        return Escape.home + Escape.clearScreen
    }

    /// The control sequences the live view uses (ECMA-48 / xterm).
    enum Escape {
        static let home = "\u{1b}[H"
        static let clearScreen = "\u{1b}[2J"
        static let clearLine = "\u{1b}[2K"
        static let clearToEnd = "\u{1b}[J"
        static let alternateScreenOn = "\u{1b}[?1049h"
        static let alternateScreenOff = "\u{1b}[?1049l"
        static let cursorHidden = "\u{1b}[?25l"
        static let cursorShown = "\u{1b}[?25h"
        static let wrapOff = "\u{1b}[?7l"
        static let wrapOn = "\u{1b}[?7h"

        /// Row 0 is the top; columns start at the left edge.
        static func moveTo(row: Int) -> String { "\u{1b}[\(row + 1);1H" }
    }
}
