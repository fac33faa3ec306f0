import Glibc
import Platform

/// The moments where a killed agent leaves the server or the disk ahead of the queue (the
/// last chunk confirmed, the file made, a download moved into place, none yet `completed`
/// in the row), and where another writer may act between a check and the step it allows
/// (an original checked, then moved to the trash).
/// The crash tests need to kill the agent exactly there: with
/// `INSTANT_UPLOAD_TEST_PAUSE=<window>` in its environment, the transfer stops at that
/// point, says so in the log, and waits (five minutes, or until it is cancelled). A test of
/// another writer acting in that moment names a file in `INSTANT_UPLOAD_TEST_PAUSE_RELEASE`
/// and makes it once it has acted: the transfers go on then (that name with `.<id>` added
/// lets only that transfer go on). The variables are read here and nowhere else; without
/// them this does nothing.
public enum CrashWindow: String, Sendable {
    /// A new upload looked at its target and found the name free; nothing is recorded yet.
    case targetChecked = "upload-target-checked"
    /// The server confirmed the chunk that completes an upload.
    case uploadConfirmed = "upload-confirmed"
    /// The row recorded the file it is about to make; the request that makes it is next.
    case aboutToMakeFile = "upload-finishing"
    /// The request that makes the uploaded file happened (tus's last chunk, the `MOVE`,
    /// the PUT); the row is not completed yet.
    case fileMade = "upload-made"
    /// A finished download has its final name; its `.part` is still there.
    case downloadInPlace = "download-in-place"
    /// A download's row is completed; Local Drive has not been told of its file yet.
    case downloadCompleted = "download-completed"
    /// The original of an upload was found to be the file uploaded; its move to the trash
    /// is next.
    case trashChecked = "trash-checked"
    /// The watch service's thread is about to read the rules for the first time; the
    /// scheduler is already running.
    case rulesUnread = "rules-unread"

    public func pauseIfTesting(transfer id: Int64? = nil, cancellation: CancellationFlag = CancellationFlag()) {
        guard let value = getenv("INSTANT_UPLOAD_TEST_PAUSE"), String(cString: value) == rawValue else { return }
        Log.info("\(id.map { "transfer \($0): " } ?? "")paused at \(rawValue) for a crash test")
        // Long enough for a test on a loaded machine to see the log line and kill the agent.
        let until = MonotonicClock.seconds() + 300
        let release = getenv("INSTANT_UPLOAD_TEST_PAUSE_RELEASE").map { String(cString: $0) }
        while !cancellation.isCancelled, MonotonicClock.seconds() < until {
            if let release, access(release, F_OK) == 0 || (id.map { access(release + ".\($0)", F_OK) == 0 } ?? false) { return }
            usleep(50_000)
        }
    }
}
