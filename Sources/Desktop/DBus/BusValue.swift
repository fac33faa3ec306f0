import CDBus

/// A D-Bus value as the notification, Secret Service and status icon protocols use them:
/// sent in calls, replies and signals, read from replies, calls and signals. Values read from the bus are plain Swift values and may
/// cross threads.
indirect enum BusValue: Sendable, Equatable {
    case byte(UInt8)
    case boolean(Bool)
    case int32(Int32)
    case uint32(UInt32)
    case string(String)
    case objectPath(String)
    case array(elementSignature: String, [BusValue])
    case structure([BusValue])
    case dictEntry(BusValue, BusValue)
    case variant(BusValue)
    /// A type this wrapper does not read (doubles, 64-bit numbers...), by its type code.
    case unsupported(Int32)

    static func strings(_ values: [String]) -> BusValue { .array(elementSignature: "s", values.map(BusValue.string)) }

    /// `a{sv}`, the shape of notification hints.
    static func variantDictionary(_ pairs: [(String, BusValue)]) -> BusValue {
        .array(elementSignature: "{sv}", pairs.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }

    var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int32: "i"
        case .uint32: "u"
        case .string: "s"
        case .objectPath: "o"
        case .array(let element, _): "a" + element
        case .structure(let items): "(" + items.map(\.signature).joined() + ")"
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .variant: "v"
        case .unsupported(let code): String(UnicodeScalar(UInt8(truncatingIfNeeded: code)))
        }
    }

    var uint32Value: UInt32? { if case .uint32(let v) = self { v } else { nil } }
    var int32Value: Int32? { if case .int32(let v) = self { v } else { nil } }
    var booleanValue: Bool? { if case .boolean(let v) = self { v } else { nil } }
    var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    var objectPathValue: String? { if case .objectPath(let v) = self { v } else { nil } }
    var objectPathsValue: [String]? {
        guard case .array(_, let items) = self else { return nil }
        let paths = items.compactMap(\.objectPathValue)
        return paths.count == items.count ? paths : nil
    }
    var bytesValue: [UInt8]? {
        guard case .array("y", let items) = self else { return nil }
        return items.compactMap { if case .byte(let b) = $0 { b } else { nil } }
    }
    var stringsValue: [String]? {
        guard case .array(_, let items) = self else { return nil }
        let strings = items.compactMap(\.stringValue)
        return strings.count == items.count ? strings : nil
    }

    /// Appends the value at `iter`; false when libdbus could not (out of memory, or a
    /// container whose contents do not match its signature).
    func append(to iter: inout DBusMessageIter) -> Bool {
        switch self {
        case .byte(let v): return cdbus_append_byte(&iter, v) != 0
        case .boolean(let v): return cdbus_append_boolean(&iter, v ? 1 : 0) != 0
        case .int32(let v): return cdbus_append_int32(&iter, v) != 0
        case .uint32(let v): return cdbus_append_uint32(&iter, v) != 0
        case .string(let v): return v.withCString { cdbus_append_string(&iter, $0) } != 0
        case .objectPath(let v): return v.withCString { cdbus_append_object_path(&iter, $0) } != 0
        case .array(let element, let items):
            return appendContainer(CDBUS_TYPE_ARRAY, signature: element, to: &iter) { sub in items.allSatisfy { $0.append(to: &sub) } }
        case .structure(let items):
            return appendContainer(CDBUS_TYPE_STRUCT, signature: nil, to: &iter) { sub in items.allSatisfy { $0.append(to: &sub) } }
        case .dictEntry(let key, let value):
            return appendContainer(CDBUS_TYPE_DICT_ENTRY, signature: nil, to: &iter) { sub in key.append(to: &sub) && value.append(to: &sub) }
        case .variant(let inner):
            return appendContainer(CDBUS_TYPE_VARIANT, signature: inner.signature, to: &iter) { sub in inner.append(to: &sub) }
        case .unsupported:
            return false
        }
    }

    private func appendContainer(_ type: Int32, signature: String?, to iter: inout DBusMessageIter,
                                 _ fill: (inout DBusMessageIter) -> Bool) -> Bool {
        var sub = DBusMessageIter()
        let opened = if let signature { signature.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) } }
                     else { dbus_message_iter_open_container(&iter, type, nil, &sub) }
        guard opened != 0 else { return false }
        guard fill(&sub) else {
            dbus_message_iter_abandon_container(&iter, &sub)
            return false
        }
        return dbus_message_iter_close_container(&iter, &sub) != 0
    }

    /// Reads every value from `iter` to the end of its container.
    static func readAll(_ iter: inout DBusMessageIter) -> [BusValue] {
        var values: [BusValue] = []
        while true {
            let type = dbus_message_iter_get_arg_type(&iter)
            if type == CDBUS_TYPE_INVALID { break }
            values.append(read(&iter, type: type))
            if dbus_message_iter_next(&iter) == 0 { break }
        }
        return values
    }

    private static func read(_ iter: inout DBusMessageIter, type: Int32) -> BusValue {
        switch type {
        case CDBUS_TYPE_BYTE: return .byte(cdbus_get_byte(&iter))
        case CDBUS_TYPE_BOOLEAN: return .boolean(cdbus_get_boolean(&iter) != 0)
        case CDBUS_TYPE_INT32: return .int32(cdbus_get_int32(&iter))
        case CDBUS_TYPE_UINT32: return .uint32(cdbus_get_uint32(&iter))
        case CDBUS_TYPE_STRING: return .string(cdbus_get_string(&iter).map { String(cString: $0) } ?? "")
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(cdbus_get_string(&iter).map { String(cString: $0) } ?? "/")
        case CDBUS_TYPE_ARRAY, CDBUS_TYPE_DICT_ENTRY, CDBUS_TYPE_VARIANT, CDBUS_TYPE_STRUCT:
            var element = ""
            if let signature = dbus_message_iter_get_signature(&iter) {
                element = String(String(cString: signature).dropFirst())
                dbus_free(signature)
            }
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            let inner = readAll(&sub)
            switch type {
            case CDBUS_TYPE_ARRAY: return .array(elementSignature: element, inner)
            case CDBUS_TYPE_VARIANT: return inner.first.map(BusValue.variant) ?? .unsupported(type)
            case CDBUS_TYPE_STRUCT: return .structure(inner)
            default: return inner.count == 2 ? .dictEntry(inner[0], inner[1]) : .unsupported(type)
            }
        default:
            return .unsupported(type)
        }
    }
}
