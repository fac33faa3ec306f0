import CDBus

/// A D-Bus connection or call that failed: what was tried, the error's D-Bus name
/// (`org.freedesktop.DBus.Error.ServiceUnknown`...) and the message that came with it.
public struct BusError: Error, CustomStringConvertible, Sendable, Equatable {
    public var operation: String
    public var name: String?
    public var message: String

    init(_ operation: String, name: String? = nil, message: String) {
        self.operation = operation
        self.name = name
        self.message = message
    }

    /// Takes the name and message out of a set `DBusError`.
    init(_ operation: String, _ error: inout DBusError) {
        self.operation = operation
        name = cdbus_error_name(&error).map { String(cString: $0) }
        message = cdbus_error_message(&error).map { String(cString: $0) } ?? "unknown error"
    }

    /// True when nobody owns the name and no service file can start one.
    var isServiceUnknown: Bool { name == "org.freedesktop.DBus.Error.ServiceUnknown" }

    public var description: String { "\(operation): \(message)" }
}
