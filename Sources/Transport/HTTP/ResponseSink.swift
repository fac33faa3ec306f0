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
    /// Read as it comes, by a reader that keeps only what it needs of it: a reply of any
    /// length (a folder of a hundred thousand photos listed) costs no more memory than a short
    /// one. The body of a status the reader does not take (an error page) is kept as in
    /// `.memory`, its first MiB only.
    case stream(ReplyReader)
}

/// A reply body read as it arrives (`ResponseSink.stream`).
public protocol ReplyReader: AnyObject {
    /// Whether the body of a reply with this status is for the reader.
    func accepts(status: Int) -> Bool
    /// The body's next bytes. False ends the exchange there, its rest unread: the reader has
    /// what it needs, or found the reply wrong, and says which once the exchange has thrown.
    func read(_ bytes: UnsafeRawBufferPointer) -> Bool
}
