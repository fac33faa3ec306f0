import Glibc
import Platform
import Queue
import Transport

/// How one transfer ended this time. The scheduler turns it into a row transition.
public enum JobOutcome: Sendable, Equatable {
    /// `verified`: the server showed the finished file at its name with the right size.
    /// `counters`: an upload's last word on what it read and hashed, when its last
    /// checkpoint does not say it already.
    case completed(sha256: String?, bytes: Int64, verified: Bool = false, counters: ResumeCounters? = nil)
    case failed(Reason)
    /// A transient problem; `progressed` is true when the offset moved this run.
    case retry(Classification, progressed: Bool)
    /// Stopped from outside (cancel, network gone, agent stopping) at the last checkpoint.
    case stopped
}
