import Foundation
import Glibc
import Platform
import Queue

/// `queue --follow`: redraws the view a few times a second, with speeds derived from how
/// far each row moved since the last frame.
struct QueueFollower {
    let store: QueueStore
    let state: TransferState?
    let context: CommandContext

    func run() throws -> Int32 {
        var last: [Int64: (bytes: Int64, time: Double)] = [:]
        var speeds: [Int64: Double] = [:]
        while true {
            let now = QueueCommands.monotonicNow()
            for row in try store.transfers(state: .inProgress) {
                if let previous = last[row.id], now > previous.time {
                    let instant = Double(row.bytesDone - previous.bytes) / (now - previous.time)
                    speeds[row.id] = speeds[row.id].map { 0.7 * $0 + 0.3 * instant } ?? instant
                }
                last[row.id] = (row.bytesDone, now)
            }
            let frame = try QueueCommands.render(store: store, state: state, width: QueueCommands.terminalWidth(), speeds: speeds)
            // Home, draw, clear what is left of the previous frame.
            context.output((StandardStreams.outputIsTerminal ? "\u{1b}[H" : "") + frame + (StandardStreams.outputIsTerminal ? "\u{1b}[J" : "\n"))
            usleep(500_000)
        }
    }
}
