import Glibc

/// A failed system call: which call, on what, and the errno it left.
public struct SystemError: Error, CustomStringConvertible, Sendable, Equatable {
    public var operation: String
    public var errno: Int32
    public var path: String?

    public init(_ operation: String, errno: Int32 = Glibc.errno, path: String? = nil) {
        self.operation = operation
        self.errno = errno
        self.path = path
    }

    /// The C library's text for the errno, e.g. "No such file or directory".
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String {
        if let path { return "\(operation) \(path): \(reason)" }
        return "\(operation): \(reason)"
    }
}

/// Calls a syscall that returns -1 on failure, retrying when a signal interrupted it.
@discardableResult
public func valueOrErrno<T: BinaryInteger>(
    _ operation: String, path: String? = nil, _ call: () -> T
) throws(SystemError) -> T {
    while true {
        let result = call()
        if result >= 0 { return result }
        let e = Glibc.errno
        if e == EINTR { continue }
        throw SystemError(operation, errno: e, path: path)
    }
}
