import Glibc
import Synchronization

/// Who we are to the server. `description` never shows the password.
public struct Credentials: Sendable, Equatable, CustomStringConvertible {
    public var username: String
    public var password: String
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
    public var description: String { "\(username):<hidden>" }
}

/// Watches the bytes of a body as they pass, e.g. to hash them or count progress.
/// Called on the transfer's own thread, in order, with every byte exactly once.
public protocol ByteObserver: AnyObject {
    func observe(_ bytes: UnsafeRawBufferPointer)
}

/// A `ByteObserver` of a resumed download's body that can be told to begin again: the
/// server answered the resume with the whole file, whose first byte comes next.
public protocol RestartableObserver: ByteObserver {
    /// What was observed so far (and whatever it stood for before the resume) no longer
    /// counts: the next byte is byte 0 of the file. Called on the transfer's own thread.
    func startOver()
}

/// What a request sends.
public enum RequestBody {
    case none
    case bytes([UInt8])
    /// `length` bytes of the open file `descriptor` from `offset`, read with pread straight
    /// into curl's buffer: the file is never held in memory.
    case file(descriptor: Int32, offset: Int64, length: Int64, observer: ByteObserver?)
    /// Bytes the caller holds in memory (a chunk it already read once, e.g. to checksum it),
    /// copied straight into curl's buffer.
    case buffer(UnsafeRawBufferPointer, observer: ByteObserver?)
}

extension RequestBody {
    /// The number of bytes the body sends.
    var length: Int64 {
        switch self {
        case .none: 0
        case .bytes(let b): Int64(b.count)
        case .file(_, _, let length, _): length
        case .buffer(let b, _): Int64(b.count)
        }
    }
}

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
}

public struct HTTPRequest {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: RequestBody
    public var sink: ResponseSink

    public init(method: String, url: String, headers: [(String, String)] = [], body: RequestBody = .none,
                sink: ResponseSink = .memory(limit: 1 << 20)) {
        self.method = method; self.url = url; self.headers = headers; self.body = body; self.sink = sink
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    /// Header names in lower case, in the order received (of the final response).
    public var headers: [(String, String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.last(where: { $0.0 == lower })?.1
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }
    public var isSuccess: Bool { (200..<300).contains(status) }
}

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

/// A thread-safe flag a transfer checks while it runs; setting it stops the transfer at once.
public final class CancellationFlag: Sendable {
    private let value = Atomic<Int>(0)
    public init() {}
    public func cancel() { value.store(1, ordering: .relaxed) }
    public var isCancelled: Bool { value.load(ordering: .relaxed) != 0 }
}
