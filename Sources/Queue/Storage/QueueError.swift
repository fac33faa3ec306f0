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

    public var description: String {
        var s = message
        if let action { s += "\n  " + action }
        return s
    }
}
