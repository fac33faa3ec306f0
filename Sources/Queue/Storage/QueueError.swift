/// A problem with the queue database, told so a person knows what to do.
public struct QueueError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var action: String?
    public var underlying: DatabaseError?

    public init(_ message: String, action: String? = nil, underlying: DatabaseError? = nil) {
        self.message = message
        self.action = action
        self.underlying = underlying
    }

    /// True when the database may well answer if asked again (busy, full, an I/O error).
    public var isTransient: Bool { underlying?.isTransient ?? false }

    public var description: String {
        var s = message
        if let action { s += "\n  " + action }
        return s
    }
}

extension QueueError {
    /// The file is damaged or not a database at all.
    public static func damaged(path: String, underlying: DatabaseError?) -> QueueError {
        QueueError("the queue database \(path) is damaged or is not a queue database",
                   action: "move it aside (mv \"\(path)\" \"\(path).broken\") and run the command again; queued items in it are lost",
                   underlying: underlying)
    }

    public static func busy(path: String, underlying: DatabaseError?) -> QueueError {
        QueueError("the queue database \(path) stayed locked by another program", action: "try again in a moment", underlying: underlying)
    }
}
