import Glibc
import Platform
import Queue
import Synchronization
import Transport

/// How one transfer ended this time. The scheduler turns it into a row transition.
public enum JobOutcome: Sendable, Equatable {
    /// `verified`: the server showed the finished file at its name with the right size.
    case completed(sha256: String?, bytes: Int64, verified: Bool = false)
    case failed(Reason)
    /// A transient problem; `progressed` is true when the offset moved this run.
    case retry(Classification, progressed: Bool)
    /// Stopped from outside (cancel, network gone, agent stopping) at the last checkpoint.
    case stopped
}

/// Settings a transfer runs with.
public struct TransferSettings: Sendable {
    /// The first chunk's size; later ones adapt to take about `chunkSeconds` each.
    public var chunkSize: Int64 = 16 * 1024 * 1024
    public var chunkSeconds: Double = 10
    public var maxChunkSize: Int64 = 512 * 1024 * 1024
    public var stallSeconds: Int = 30
    /// How often the agent writes the progress of running transfers to their rows.
    public var progressInterval: Double = 0.25
    /// Where the transfer counts its bytes for the agent to write (see `TransferProgress`):
    /// the agent gives each transfer it starts one of its own.
    public var progress: TransferProgress?
    /// How long a file that changed must stay untouched before it is sent again.
    public var settleSeconds: Double = ResumePolicy.settleSeconds
    /// The config's `ca_file`, trusted for every account that names none of its own.
    public var caFile: String?
    public init() {}
}

extension TransferSettings {
    /// The one setup of every HTTP session the program opens to an account's server (the
    /// agent's transfers and cancels, the CLI's checks): stall limit, cancellation flag, and
    /// the CA file trusted for that account, its own before the config's.
    public func prepare(_ session: HTTPSession, for account: Account, cancellation: CancellationFlag = CancellationFlag()) {
        session.cancellation = cancellation
        session.stallSeconds = stallSeconds
        session.caFile = account.caFile ?? caFile
    }
}

/// What servers said about themselves, remembered for the agent's lifetime.
public final class ServerInfoCache: Sendable {
    private let entries = Mutex<[String: UploadCapabilities]>([:])
    public init() {}
    public func info(for endpoint: String, discover: () throws -> UploadCapabilities) throws -> UploadCapabilities {
        if let known = entries.withLock({ $0[endpoint] }) { return known }
        let info = try discover()
        entries.withLock { $0[endpoint] = info }
        return info
    }
    public func forget(_ endpoint: String) { _ = entries.withLock { $0.removeValue(forKey: endpoint) } }
}

/// Counts a transfer's bytes as they pass, into its `TransferProgress`. It runs inside
/// libcurl's callbacks, so it never touches the database: a locked queue must not stall
/// the socket. The agent writes the count to the row on its own schedule.
final class ProgressRecorder: RestartableObserver {
    let progress: TransferProgress?
    let next: ByteObserver?
    /// Where the transfer stands in the file, in bytes.
    private(set) var position: Int64
    /// Bytes that passed through this recorder.
    private(set) var bytesRead: Int64 = 0
    /// The server sent the whole file again, from byte 0: the bytes before the old
    /// position, and whatever was derived from them (a checkpoint's hash), are stale.
    private(set) var startedOver = false

    init(progress: TransferProgress?, position: Int64, next: ByteObserver?) {
        self.progress = progress; self.position = position; self.next = next
        progress?.set(position)
    }

    func observe(_ bytes: UnsafeRawBufferPointer) {
        next?.observe(bytes)
        position += Int64(bytes.count)
        bytesRead += Int64(bytes.count)
        progress?.set(position)
    }

    func startOver() {
        if let next {
            guard let restartable = next as? RestartableObserver else {
                preconditionFailure("a download's hash must be able to start over, and \(type(of: next)) cannot")
            }
            restartable.startOver()
        }
        position = 0
        startedOver = true
        progress?.set(0)
    }
}

func monotonicSeconds() -> Double { MonotonicClock.seconds() }

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
