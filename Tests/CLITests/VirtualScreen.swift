/// A few rows of character cells that apply the control sequences the live view writes
/// (cursor position, clear line, clear below, clear screen), so tests can read what a
/// terminal would show after a series of frames. Line wrapping is off, as in the live view.
struct VirtualScreen {
    var cells: [[Character]]
    var row = 0
    var column = 0
    let width: Int

    init(rows: Int, columns: Int) {
        width = columns
        cells = Array(repeating: Array(repeating: " ", count: columns), count: rows)
    }

    /// The rows as text, trailing blanks removed.
    var lines: [String] { cells.map { String($0).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) } }

    mutating func apply(_ output: String) {
        var scalars = Array(output)[...]
        while let c = scalars.popFirst() {
            guard c == "\u{1b}" else {
                if row < cells.count, column < width { cells[row][column] = c }
                column = min(column + 1, width)
                continue
            }
            guard scalars.popFirst() == "[" else { continue }
            var parameters = ""
            while let p = scalars.first, p.isNumber || p == ";" || p == "?" { parameters.append(p); scalars.removeFirst() }
            guard let final = scalars.popFirst() else { return }
            let numbers = parameters.split(separator: ";").map { Int($0.filter(\.isNumber)) ?? 0 }
            switch final {
            case "H":
                row = max(1, numbers.first ?? 1) - 1
                column = max(1, numbers.count > 1 ? numbers[1] : 1) - 1
            case "K" where parameters == "2":
                if row < cells.count { cells[row] = Array(repeating: " ", count: width) }
            case "K":
                if row < cells.count { for c in column..<width { cells[row][c] = " " } }
            case "J" where parameters == "2":
                cells = cells.map { _ in Array(repeating: " ", count: width) }
            case "J":
                if row < cells.count {
                    for c in column..<width { cells[row][c] = " " }
                    for r in (row + 1)..<cells.count { cells[r] = Array(repeating: " ", count: width) }
                }
            default:
                break  // modes (?25l, ?1049h, ?7l): nothing to draw
            }
        }
    }
}
