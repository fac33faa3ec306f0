import Glibc

/// Where a response body goes.
public enum ResponseSink {
    /// Kept in memory, up to a limit (small replies: XML, errors).
    case memory(limit: Int)
    /// A download, written into an open file at its position, never held in memory. The
    /// file may hold the first bytes already, from an earlier attempt, with the position
    /// after them: a `206` body follows those bytes. A `200` body is the whole file: as its
    /// headers end, before its first byte, the file is emptied and `observer` starts over,
    /// so a `200` that breaks off leaves only its own bytes, never old ones stitched to new.
    /// Any other body (an error page) follows the old bytes, for the caller to cut off;
    /// `observer` sees only the body of a success (2xx).
    case download(descriptor: Int32, observer: RestartableObserver?)
    /// Hashed as it comes and never kept: a file read back only to compare it with ours. The
    /// caller looks at the status: the digest of an error page means nothing.
    case hashed(RunningSHA256)
}
