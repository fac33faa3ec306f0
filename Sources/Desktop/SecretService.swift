import Platform

/// The freedesktop Secret Service (GNOME Keyring, KeePassXC, KWallet...), asked directly
/// over the session bus, because only the service's own answer tells "not stored" from
/// "locked": `secret-tool lookup` fails the same way for both, and a caller that takes a
/// locked keyring for a missing password ends up sending no password at all.
///
/// One lookup is one short-lived private connection: a plain session (the secret crosses
/// only this user's bus), `SearchItems`, then `GetSecrets` for an unlocked match. Nothing
/// is unlocked here: a background agent must not pop up prompts; it waits instead.
struct SecretService {
    static let name = "org.freedesktop.secrets"
    static let path = "/org/freedesktop/secrets"
    static let interface = "org.freedesktop.Secret.Service"

    enum Answer: Equatable {
        case found(String)
        case notStored
        case unavailable(String)
    }

    let address: String
    /// Long enough for the bus to start a keyring that is activated on demand.
    var timeoutMilliseconds: Int32 = 25_000

    func lookup(_ attributes: [String: String]) -> Answer {
        let bus: BusConnection
        do { bus = try BusConnection(address: address) } catch {
            return .unavailable("the session bus cannot be reached (\(error.message))")
        }
        do {
            let session = try call(bus, Self.path, Self.interface, "OpenSession", [.string("plain"), .variant(.string(""))])
            guard session.count == 2, let sessionPath = session[1].objectPathValue else {
                return .unavailable("the keyring answered OpenSession with something unexpected")
            }
            defer { _ = try? call(bus, sessionPath, "org.freedesktop.Secret.Session", "Close", [], timeout: 2_000) }

            let pairs = attributes.sorted { $0.key < $1.key }.map { BusValue.dictEntry(.string($0.key), .string($0.value)) }
            let found = try call(bus, Self.path, Self.interface, "SearchItems", [.array(elementSignature: "{ss}", pairs)])
            guard found.count == 2, let unlocked = found[0].objectPathsValue, let locked = found[1].objectPathsValue else {
                return .unavailable("the keyring answered SearchItems with something unexpected")
            }
            guard let item = unlocked.first else {
                return locked.isEmpty ? .notStored : .unavailable("the keyring is locked")
            }
            let secrets = try call(bus, Self.path, Self.interface, "GetSecrets",
                                   [.array(elementSignature: "o", [.objectPath(item)]), .objectPath(sessionPath)])
            // a{o(oayays)}: item -> (session, parameters, value, content type)
            guard case .array(_, let entries)? = secrets.first,
                  case .dictEntry(_, .structure(let fields))? = entries.first(where: { if case .dictEntry(.objectPath(item), _) = $0 { true } else { false } }),
                  fields.count == 4, let value = fields[2].bytesValue else {
                return .unavailable("the keyring did not hand over the password (it may have been locked meanwhile)")
            }
            return .found(String(decoding: value, as: UTF8.self))
        } catch let error where error.isServiceUnknown {
            return .unavailable("no keyring (Secret Service) runs in this session yet")
        } catch let error where error.name == "org.freedesktop.Secret.Error.IsLocked" {
            return .unavailable("the keyring is locked")
        } catch {
            return .unavailable("the keyring did not answer (\(error.message))")
        }
    }

    /// Whether the session offers a Secret Service at all: one owns its name on the bus, or
    /// the bus can start one. A session without one keeps passwords in the credentials file
    /// by design; one that is offered and refuses to store is something to tell the person.
    func isOffered() -> Bool {
        guard let bus = try? BusConnection(address: address) else { return false }
        let dbus = (name: "org.freedesktop.DBus", path: "/org/freedesktop/DBus")
        if (try? bus.call(destination: dbus.name, path: dbus.path, interface: dbus.name, member: "GetNameOwner",
                          arguments: [.string(Self.name)], timeoutMilliseconds: 5_000)) != nil {
            return true
        }
        let activatable = try? bus.call(destination: dbus.name, path: dbus.path, interface: dbus.name, member: "ListActivatableNames",
                                        timeoutMilliseconds: 5_000)
        return activatable?.arguments.first?.stringsValue?.contains(Self.name) ?? false
    }

    private func call(_ bus: BusConnection, _ path: String, _ interface: String, _ member: String, _ arguments: [BusValue],
                      timeout: Int32? = nil) throws(BusError) -> [BusValue] {
        try bus.call(destination: Self.name, path: path, interface: interface, member: member, arguments: arguments,
                     timeoutMilliseconds: timeout ?? timeoutMilliseconds).arguments
    }
}
