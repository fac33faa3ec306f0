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

/// One private connection to a message bus: the only owner of its `DBusConnection*`.
///
/// Not `Sendable`: `SessionBus` keeps it behind a mutex, so one thread at a time calls
/// into libdbus through it.
final class BusConnection {
    private let connection: OpaquePointer
    /// Signals the filter saw during `pump()`, waiting for `takeSignals()`.
    private var received: [BusSignal] = []
    private var filterInstalled = false

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

    func takeSignals() -> [BusSignal] {
        defer { received.removeAll() }
        return received
    }

    private static func arguments(of message: OpaquePointer) -> [BusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        return BusValue.readAll(&iter)
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
