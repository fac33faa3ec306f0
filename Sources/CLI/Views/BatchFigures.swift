import Platform
import Queue

/// The work in flight since the queue was last idle (the batch), and what holds it: the
/// figures behind `status` and the top line of `queue`.
public struct BatchFigures: Sendable, Equatable {
    public var uploading = 0
    public var downloading = 0
    /// Queued rows waiting their turn.
    public var waiting = 0
    /// Queued rows held by a gate: no network, no Wi-Fi, paused by the person.
    public var waitingForNetwork = 0
    public var waitingForWiFi = 0
    /// Held by a watch rule that uploads only on mains power.
    public var waitingForPower = 0
    public var paused = 0
    /// Retrying rows by the reason they wait on.
    public var retrying: [ReasonCode: Int] = [:]
    /// Every failed row, in this batch or before: they all wait for the person.
    public var failed = 0

    /// Rows of the batch, and those of them completed.
    public var filesDone = 0
    public var filesTotal = 0
    /// Bytes of the batch's rows, and how many of them have moved.
    public var bytesDone: Int64 = 0
    public var bytesTotal: Int64 = 0
    /// Bytes still to move for rows that are queued, moving or retrying; failed rows do not
    /// move until the person acts, so they are not counted in the time left.
    public var bytesLeft: Int64 = 0
    /// Bytes per second over the last seconds, as the agent measured it; nil when unknown.
    public var rate: Double?
    /// The batch's files a watch rule (or Local Drive) took as they were after waiting for
    /// them to be finished (`Transfer.takenNote`): how many, and the first few.
    public var takenAsItWas = 0
    public var takenAsItWasFirst: [TakenAsItWas] = []

    public struct TakenAsItWas: Sendable, Equatable {
        public var id: Int64
        public var path: LocalPath
        public var note: String

        public init(id: Int64, path: LocalPath, note: String) { self.id = id; self.path = path; self.note = note }
    }

    public init() {}

    /// Seconds until the batch is done at the current rate; nil without a rate.
    public var eta: Double? {
        guard let rate, rate > 0, bytesLeft > 0 else { return nil }
        return Double(bytesLeft) / rate
    }

    /// Rows that are moving or will move by themselves.
    public var active: Int {
        uploading + downloading + waiting + waitingForNetwork + waitingForWiFi + waitingForPower + paused + retrying.values.reduce(0, +)
    }
}
