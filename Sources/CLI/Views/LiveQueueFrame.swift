import Queue

/// One screen of `queue --follow`: the status line, then as many rows as the terminal holds,
/// the ones that matter first (moving, then failed, retrying, waiting, done), and for each
/// group the rows that did not fit as `… and 260 more waiting`.
///
/// Never more lines than `height` and never a line wider than `width` cells, so the frame
/// cannot scroll or wrap whatever the rows hold.
public struct LiveQueueFrame: Sendable {
    /// The order groups are given room in, and shown in.
    public static let priority: [TransferState] = [.inProgress, .failed, .retrying, .queued, .completed]

    /// The status line(s) on top.
    public var header: String
    /// The rows to lay out; groups may hold more rows than fit, and fewer than their total.
    public var view: QueueView
    public var height: Int
    public var width: Int

    public init(header: String, view: QueueView, height: Int, width: Int) {
        self.header = header; self.view = view; self.height = max(1, height); self.width = max(1, width)
    }

    /// The lines of the frame, top to bottom, without line ends.
    public func lines() -> [String] {
        // A status line too wide for the screen breaks after its `;`, so the time left, at
        // its end, stays in sight.
        let head = header.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line -> [String] in
            guard TextLayout.cells(String(line)) > width, let cut = line.firstRange(of: "; ") else { return [clip(String(line))] }
            return [clip(String(line[..<cut.lowerBound]) + ";"), clip(String(line[cut.upperBound...]))]
        }
        let groups = Self.priority.compactMap { state in view.groups.first { $0.state == state && $0.total > 0 } }
        guard !groups.isEmpty, head.count < height else { return Array(head.prefix(height)) }

        let blocks = groups.map { group -> [[String]] in
            let idWidth = QueueView.idWidth(group.rows)
            return zip(group.rows, QueueView.positions(group.rows)).map { row, position in
                view.rowLines(row, position: position, idWidth: idWidth).map(clip)
            }
        }
        // A blank line between groups only when every row fits; otherwise the room goes to rows.
        func cost(_ counts: [Int], spaced: Bool) -> Int {
            var total = 0
            for (i, group) in groups.enumerated() {
                total += (i > 0 && spaced ? 1 : 0) + 1
                total += blocks[i].prefix(counts[i]).reduce(0) { $0 + $1.count }
                if counts[i] > 0, counts[i] < group.total { total += 1 }
            }
            return total
        }
        let budget = height - head.count - 1
        let all = blocks.map(\.count)
        let spaced = groups.indices.allSatisfy { all[$0] == groups[$0].total } && cost(all, spaced: true) <= budget
        var shown = spaced ? all : Array(repeating: 0, count: groups.count)
        fill: for i in groups.indices where !spaced {
            while shown[i] < blocks[i].count {
                shown[i] += 1
                if cost(shown, spaced: false) > budget {
                    shown[i] -= 1
                    break fill
                }
            }
        }

        var out = head + [""]
        for (i, group) in groups.enumerated() {
            if i > 0 && spaced { out.append("") }
            out.append(clip("\(QueueView.title(group.state)) (\(group.total))"))
            for block in blocks[i].prefix(shown[i]) { out += block }
            let hidden = group.total - shown[i]
            if shown[i] > 0, hidden > 0 { out.append(clip("  … and \(hidden) more \(Self.moreWord(group.state))")) }
        }
        if out.count > height {
            // Not even the titles fit: keep what does, and count the rest on the last line.
            let kept = Array(out.prefix(height - 1))
            let keptTitles = Set(kept)
            let rest = groups.filter { !keptTitles.contains("\(QueueView.title($0.state)) (\($0.total))") }
            out = kept + [clip("… and " + rest.map { "\($0.total) \(Self.moreWord($0.state))" }.joined(separator: ", "))]
        }
        return out
    }

    func clip(_ line: String) -> String { TextLayout.clip(line, cells: width) }

    /// `… and 12 more waiting`.
    static func moreWord(_ state: TransferState) -> String {
        switch state {
        case .inProgress: "moving"
        case .failed: "failed"
        case .retrying: "retrying"
        case .queued: "waiting"
        case .completed: "completed"
        }
    }
}
