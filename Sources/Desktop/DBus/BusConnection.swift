import CDBus
import Glibc

/// A signal as it arrived: who sent it and what it carried, as plain values.
struct BusSignal: Sendable, Equatable {
    var sender: String?
    var interface: String
    var member: String
    var arguments: [BusValue]
}

/// What a method call answered: the answering connection's unique name and the values.
struct BusReply: Sendable, Equatable {
    var sender: String?
    var arguments: [BusValue]
}

/// A method call to an object this connection serves.
struct BusCall: Sendable, Equatable {
    var sender: String?
    var path: String
    /// Empty when the caller named none (the bus allows that).
    var interface: String
    var member: String
    var arguments: [BusValue]
}

/// How a served method call is answered.
enum BusAnswer: Sendable, Equatable {
    case values([BusValue])
    case error(name: String, message: String)

    static func unknownMethod(_ call: BusCall) -> BusAnswer {
        .error(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(call.interface).\(call.member) at \(call.path)")
    }
    static func invalidArguments(_ message: String) -> BusAnswer {
        .error(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }
}

/// One private connection to a message bus: the only owner of its `DBusConnection*`.
///
/// Not `Sendable`: `SessionBus` keeps it behind a mutex, so one thread at a time calls
/// into libdbus through it.
final class BusConnection {
    private let connection: OpaquePointer
    /// Signals the filter saw during `pump()`, waiting for `takeSignals()`.
    private var received: [BusSignal] = []
    private var filterInstalled = false
    /// Answers method calls to served objects, on the thread that calls `pump()`.
    private var server: ((BusCall) -> BusAnswer?)?

    /// Connects to `address` (a D-Bus address such as `unix:path=/run/user/1000/bus`) and
    /// says hello to the bus.
    init(address: String) throws(BusError) {
        // Harmless when already done; libdbus >= 1.7 does it itself, older ones need it for
        // a connection used from more than one thread.
        dbus_threads_init_default()
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        // A private connection to the address we were given, not `dbus_bus_get`: the caller's
        // environment decides the bus (tests pass their own), and nothing is shared with
        // other code in the process that might close it.
        guard let c = dbus_connection_open_private(address, &error) else {
            throw BusError("cannot connect to the session bus", &error)
        }
        // libdbus's default for bus connections is `_exit(1)` when the bus goes away; the
        // agent must outlive a desktop session's bus.
        dbus_connection_set_exit_on_disconnect(c, 0)
        guard dbus_bus_register(c, &error) != 0 else {
            let failure = BusError("the session bus refused the connection", &error)
            dbus_connection_close(c)
            dbus_connection_unref(c)
            throw failure
        }
        connection = c
    }

    deinit {
        if filterInstalled {
            dbus_connection_remove_filter(connection, BusConnection.filter, Unmanaged.passUnretained(self).toOpaque())
        }
        if server != nil {
            dbus_connection_remove_filter(connection, BusConnection.methodFilter, Unmanaged.passUnretained(self).toOpaque())
        }
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }

    var isConnected: Bool { dbus_connection_get_is_connected(connection) != 0 }

    /// The socket, for `poll`.
    var fileDescriptor: Int32? {
        var fd: Int32 = -1
        return dbus_connection_get_unix_fd(connection, &fd) != 0 ? fd : nil
    }

    /// The connection's unique name on the bus (`:1.42`).
    var uniqueName: String? { dbus_bus_get_unique_name(connection).map { String(cString: $0) } }

    /// Calls a method and waits up to `timeoutMilliseconds` for its reply.
    func call(destination: String, path: String, interface: String, member: String,
              arguments: [BusValue] = [], timeoutMilliseconds: Int32) throws(BusError) -> BusReply {
        let what = "\(interface).\(member)"
        guard let message = dbus_message_new_method_call(destination, path, interface, member) else {
            throw BusError(what, message: "out of memory")
        }
        defer { dbus_message_unref(message) }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for argument in arguments where !argument.append(to: &iter) {
            throw BusError(what, message: "cannot encode the arguments")
        }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let reply = dbus_connection_send_with_reply_and_block(connection, message, timeoutMilliseconds, &error) else {
            throw BusError(what, &error)
        }
        defer { dbus_message_unref(reply) }
        return BusReply(sender: dbus_message_get_sender(reply).map { String(cString: $0) }, arguments: Self.arguments(of: reply))
    }

    /// Asks the bus to route signals matching `rule` to this connection.
    func addMatch(_ rule: String) throws(BusError) {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        dbus_bus_add_match(connection, rule, &error)
        if dbus_error_is_set(&error) != 0 { throw BusError("add match rule \(rule)", &error) }
    }

    /// Starts collecting incoming signals for `takeSignals()`.
    func collectSignals() {
        guard !filterInstalled else { return }
        filterInstalled = dbus_connection_add_filter(connection, BusConnection.filter,
                                                     Unmanaged.passUnretained(self).toOpaque(), nil) != 0
    }

    /// Reads and writes whatever the socket allows without waiting, then dispatches every
    /// complete message. False once the connection is gone.
    func pump() -> Bool {
        _ = dbus_connection_read_write(connection, 0)
        while dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
        return isConnected
    }

    /// Answers method calls with `handler` from now on: it runs inside `pump()` and returns
    /// nil for calls it does not know (libdbus then answers `UnknownMethod`).
    func serve(_ handler: @escaping (BusCall) -> BusAnswer?) {
        let first = server == nil
        server = handler
        if first {
            _ = dbus_connection_add_filter(connection, BusConnection.methodFilter, Unmanaged.passUnretained(self).toOpaque(), nil)
        }
    }

    /// Asks the bus for a well-known name, not waiting in line for it: true when it is ours.
    func requestName(_ name: String) throws(BusError) -> Bool {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let result = dbus_bus_request_name(connection, name, UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE), &error)
        if dbus_error_is_set(&error) != 0 { throw BusError("request the name \(name)", &error) }
        return result == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER || result == DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER
    }

    /// Sends a signal from `path`; false when it could not be queued (out of memory, or
    /// values that do not encode).
    @discardableResult
    func emit(path: String, interface: String, member: String, arguments: [BusValue] = []) -> Bool {
        guard let message = dbus_message_new_signal(path, interface, member) else { return false }
        defer { dbus_message_unref(message) }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for argument in arguments where !argument.append(to: &iter) { return false }
        guard dbus_connection_send(connection, message, nil) != 0 else { return false }
        dbus_connection_flush(connection)
        return true
    }

    /// True when libdbus holds messages it read off the socket (during a blocking call) that
    /// are not dispatched yet: `poll` on the socket cannot see them.
    var hasQueuedMessages: Bool { dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS }

    func takeSignals() -> [BusSignal] {
        defer { received.removeAll() }
        return received
    }

    private static func arguments(of message: OpaquePointer) -> [BusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        return BusValue.readAll(&iter)
    }

    /// Runs inside `dbus_connection_dispatch`: hands a method call to the server and sends
    /// its answer (unless the caller asked for none).
    private static let methodFilter: DBusHandleMessageFunction = { raw, message, userData in
        guard let raw, let message, let userData, dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_METHOD_CALL,
              let path = dbus_message_get_path(message), let member = dbus_message_get_member(message)
        else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        let connection = Unmanaged<BusConnection>.fromOpaque(userData).takeUnretainedValue()
        let call = BusCall(sender: dbus_message_get_sender(message).map { String(cString: $0) }, path: String(cString: path),
                           interface: dbus_message_get_interface(message).map { String(cString: $0) } ?? "",
                           member: String(cString: member), arguments: arguments(of: message))
        guard let answer = connection.server?(call) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        if dbus_message_get_no_reply(message) != 0 { return DBUS_HANDLER_RESULT_HANDLED }
        // A reply that cannot be built is answered with an error, never left for libdbus to
        // dispatch again (it would come back forever).
        var reply = BusConnection.reply(to: message, answer)
        if reply == nil { reply = BusConnection.reply(to: message, .error(name: "org.freedesktop.DBus.Error.Failed", message: "the answer could not be encoded")) }
        guard let reply else { return DBUS_HANDLER_RESULT_HANDLED }
        _ = dbus_connection_send(raw, reply, nil)
        dbus_message_unref(reply)
        return DBUS_HANDLER_RESULT_HANDLED
    }

    private static func reply(to message: OpaquePointer, _ answer: BusAnswer) -> OpaquePointer? {
        switch answer {
        case .values(let values):
            guard let reply = dbus_message_new_method_return(message) else { return nil }
            var iter = DBusMessageIter()
            dbus_message_iter_init_append(reply, &iter)
            guard values.allSatisfy({ $0.append(to: &iter) }) else {
                dbus_message_unref(reply)
                return nil
            }
            return reply
        case .error(let name, let text):
            return dbus_message_new_error(message, name, text)
        }
    }

    /// Runs inside `dbus_connection_dispatch`, on the thread that called `pump()`, which
    /// holds the connection: it only records the signal.
    private static let filter: DBusHandleMessageFunction = { _, message, userData in
        guard let message, let userData, dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_SIGNAL,
              let interface = dbus_message_get_interface(message), let member = dbus_message_get_member(message)
        else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        let connection = Unmanaged<BusConnection>.fromOpaque(userData).takeUnretainedValue()
        connection.received.append(BusSignal(sender: dbus_message_get_sender(message).map { String(cString: $0) },
                                             interface: String(cString: interface), member: String(cString: member),
                                             arguments: arguments(of: message)))
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }
}
