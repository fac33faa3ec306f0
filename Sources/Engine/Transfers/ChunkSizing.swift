import Glibc
import Platform
import Queue
import Transport

/// How big the next chunk is: sized to take about `chunkSeconds` at the speed the last one
/// went, at most doubling per step, never below the configured size nor above the maximum,
/// and always within what the server allows (`bounds`).
enum ChunkSizing {
    static func next(after size: Int64, took seconds: Double, settings: TransferSettings,
                     within bounds: ClosedRange<Int64> = 1...Int64.max) -> Int64 {
        let wanted: Int64
        if seconds > 0 {
            let ideal = Double(size) * settings.chunkSeconds / seconds
            let bounded = min(ideal, Double(size) * 2, Double(settings.maxChunkSize))
            wanted = max(settings.chunkSize, Int64(saturating: bounded))
        } else {
            wanted = min(size.multipliedReportingOverflow(by: 2).overflow ? Int64.max : size * 2, settings.maxChunkSize)
        }
        return min(max(wanted, bounds.lowerBound), bounds.upperBound)
    }

    /// The sizes a file's chunks may have on a server: at least its minimum (all but the
    /// last) and enough to stay within its chunk count, at most its maximum; the minimum
    /// wins where they cross.
    static func bounds(for capabilities: UploadCapabilities, size: Int64) -> ClosedRange<Int64> {
        var floor = max(1, capabilities.minChunkSize ?? 1)
        if let count = capabilities.maxChunkCount, count > 0 {
            floor = max(floor, size / count + (size % count == 0 ? 0 : 1))
        }
        let ceiling = max(floor, capabilities.maxChunkSize ?? Int64.max)
        return floor...ceiling
    }
}
