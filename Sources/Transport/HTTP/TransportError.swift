import Glibc

/// A transfer that did not get an HTTP answer: the link, the peer, the disk, or us.
public struct TransportError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: String, Sendable {
        case unreachable, timeout, connectionReset, tls, cancelled, sourceRead, sinkWrite, badURL, other
        /// A reply libcurl refused to read (e.g. a `Content-Length` that is no number): asking
        /// again gets the same nonsense.
        case malformedReply
    }
    public var kind: Kind
    public var message: String
    public var curlCode: Int32
    /// For `sourceRead`/`sinkWrite`: the errno from the file.
    public var errno: Int32?
    /// For a stall: how long nothing moved before the transfer was given up.
    public var stalledSeconds: Int?

    public init(kind: Kind, message: String, curlCode: Int32 = 0, errno: Int32? = nil, stalledSeconds: Int? = nil) {
        self.kind = kind; self.message = message; self.curlCode = curlCode; self.errno = errno
        self.stalledSeconds = stalledSeconds
    }
    public var description: String { message }
}
