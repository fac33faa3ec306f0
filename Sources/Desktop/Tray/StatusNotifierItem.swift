/// The status icon as the freedesktop StatusNotifierItem protocol shows it: the
/// `org.kde.StatusNotifierItem` object at `/StatusNotifierItem` and its
/// `com.canonical.dbusmenu` menu at `/MenuBar`, answering a panel's calls from the current
/// picture and telling it what changed.
///
/// Not thread-safe: `StatusIcon` calls it from its one thread.
final class StatusNotifierItem {
    static let itemPath = "/StatusNotifierItem"
    static let menuPath = "/MenuBar"
    static let itemInterface = "org.kde.StatusNotifierItem"
    static let menuInterface = "com.canonical.dbusmenu"
    static let properties = "org.freedesktop.DBus.Properties"

    private(set) var picture: TrayPicture
    private var menu = DBusMenu()
    /// The icon names to use for each mood: ours where installed, else freedesktop names.
    private let iconName: (TrayPicture.Mood) -> String
    private let iconThemePath: String
    /// What the person asked for since the last `takeRequests()`.
    private var requests: [TrayAction] = []

    init(_ picture: TrayPicture, iconName: @escaping (TrayPicture.Mood) -> String, iconThemePath: String = "") {
        self.picture = picture
        self.iconName = iconName
        self.iconThemePath = iconThemePath
        _ = menu.update(picture.menu)
    }

    func takeRequests() -> [TrayAction] {
        defer { requests.removeAll() }
        return requests
    }

    /// Takes a new picture and returns the signals that tell a panel what changed.
    func update(_ new: TrayPicture) -> [(path: String, interface: String, member: String, arguments: [BusValue])] {
        let old = picture
        picture = new
        var signals: [(path: String, interface: String, member: String, arguments: [BusValue])] = []
        func item(_ member: String, _ arguments: [BusValue] = []) {
            signals.append((Self.itemPath, Self.itemInterface, member, arguments))
        }
        if old.mood != new.mood {
            item("NewIcon")
            item("NewAttentionIcon")
            item("NewStatus", [.string(new.mood.itemStatus)])
        }
        if old.title != new.title { item("NewTitle") }
        if old.title != new.title || old.body != new.body || old.mood != new.mood { item("NewToolTip") }
        if menu.update(new.menu) {
            signals.append((Self.menuPath, Self.menuInterface, "LayoutUpdated", [.uint32(menu.revision), .int32(0)]))
        }
        return signals
    }

    // MARK: Answering calls

    func answer(_ call: BusCall) -> BusAnswer? {
        switch (call.path, call.interface) {
        case (_, "org.freedesktop.DBus.Introspectable") where call.member == "Introspect":
            guard let xml = Self.introspection[call.path] else { return nil }
            return .values([.string(xml)])
        case (Self.itemPath, Self.properties), (Self.menuPath, Self.properties):
            return propertiesCall(call)
        case (Self.itemPath, Self.itemInterface), (Self.itemPath, ""):
            return itemCall(call)
        case (Self.menuPath, Self.menuInterface), (Self.menuPath, ""):
            return menuCall(call)
        default:
            return nil
        }
    }

    private func propertiesCall(_ call: BusCall) -> BusAnswer {
        let interface = call.arguments.first?.stringValue ?? ""
        let all: [(String, BusValue)]
        switch (call.path, interface) {
        case (Self.itemPath, Self.itemInterface), (Self.itemPath, ""): all = itemProperties()
        case (Self.menuPath, Self.menuInterface), (Self.menuPath, ""): all = menuProperties()
        default: return .invalidArguments("no interface \(interface) at \(call.path)")
        }
        switch call.member {
        case "GetAll":
            return .values([.variantDictionary(all)])
        case "Get":
            guard call.arguments.count == 2, let name = call.arguments[1].stringValue else { return .invalidArguments("Get takes (ss)") }
            guard let value = all.first(where: { $0.0 == name })?.1 else { return .invalidArguments("no property \(name)") }
            return .values([.variant(value)])
        case "Set":
            return .error(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "the status icon's properties are read-only")
        default:
            return .unknownMethod(call)
        }
    }

    private func itemProperties() -> [(String, BusValue)] {
        let icon = iconName(picture.mood)
        let noPixmaps = BusValue.array(elementSignature: "(iiay)", [])
        return [
            ("Category", .string("ApplicationStatus")),
            ("Id", .string("instant-upload")),
            ("Title", .string(picture.title)),
            ("Status", .string(picture.mood.itemStatus)),
            ("WindowId", .int32(0)),
            ("IconName", .string(icon)),
            ("IconThemePath", .string(iconThemePath)),
            ("IconPixmap", noPixmaps),
            ("AttentionIconName", .string(iconName(.attention))),
            ("AttentionIconPixmap", noPixmaps),
            ("OverlayIconName", .string("")),
            ("OverlayIconPixmap", noPixmaps),
            ("ToolTip", .structure([.string(icon), noPixmaps, .string(picture.title), .string(picture.body)])),
            ("ItemIsMenu", .boolean(false)),
            ("Menu", .objectPath(Self.menuPath)),
        ]
    }

    private func menuProperties() -> [(String, BusValue)] {
        [("Version", .uint32(3)), ("TextDirection", .string("ltr")), ("Status", .string("normal")),
         ("IconThemePath", .strings([]))]
    }

    private func itemCall(_ call: BusCall) -> BusAnswer? {
        switch call.member {
        case "Activate", "SecondaryActivate":
            // A left click (or a middle one): the queue, as "Show queue" opens it.
            requests.append(.showQueue)
            return .values([])
        case "ContextMenu", "Scroll", "ProvideXdgActivationToken":
            // Hosts that cannot show a dbusmenu ask the item to; this one has nothing else
            // to show. Scrolling means nothing here.
            return .values([])
        default:
            return nil
        }
    }

    private func menuCall(_ call: BusCall) -> BusAnswer? {
        let a = call.arguments
        switch call.member {
        case "GetLayout":
            guard a.count == 3, let parent = a[0].int32Value, let depth = a[1].int32Value, let names = a[2].stringsValue
            else { return .invalidArguments("GetLayout takes (iias)") }
            guard let layout = menu.layout(parent, depth: depth, names: names) else { return .invalidArguments("no menu item \(parent)") }
            return .values([.uint32(menu.revision), layout])
        case "GetGroupProperties":
            guard a.count == 2, case .array(_, let idValues) = a[0], let names = a[1].stringsValue
            else { return .invalidArguments("GetGroupProperties takes (aias)") }
            let ids = idValues.compactMap(\.int32Value)
            let found = ids.compactMap { id in menu.properties(id, names: names).map { BusValue.structure([.int32(id), $0]) } }
            return .values([.array(elementSignature: "(ia{sv})", found)])
        case "GetProperty":
            guard a.count == 2, let id = a[0].int32Value, let name = a[1].stringValue else { return .invalidArguments("GetProperty takes (is)") }
            guard case .array(_, let entries)? = menu.properties(id, names: [name]), case .dictEntry(_, let value)? = entries.first
            else { return .invalidArguments("no property \(name) on menu item \(id)") }
            return .values([value])
        case "Event":
            guard a.count == 4, let id = a[0].int32Value, let event = a[1].stringValue else { return .invalidArguments("Event takes (isvu)") }
            guard menu.nodes[id] != nil else { return .invalidArguments("no menu item \(id)") }
            if event == "clicked", let action = menu.actions[id] { requests.append(action) }
            return .values([])
        case "EventGroup":
            guard let first = a.first, case .array(_, let events) = first else { return .invalidArguments("EventGroup takes (a(isvu))") }
            var unknown: [BusValue] = []
            for case .structure(let e) in events where e.count == 4 {
                guard let id = e[0].int32Value, menu.nodes[id] != nil else {
                    if let id = e[0].int32Value { unknown.append(.int32(id)) }
                    continue
                }
                if e[1].stringValue == "clicked", let action = menu.actions[id] { requests.append(action) }
            }
            return .values([.array(elementSignature: "i", unknown)])
        case "AboutToShow":
            // The menu is always up to date: nothing to fetch before it opens.
            return .values([.boolean(false)])
        case "AboutToShowGroup":
            return .values([.array(elementSignature: "i", []), .array(elementSignature: "i", [])])
        default:
            return nil
        }
    }

    /// What `Introspect` answers, for hosts and tools that ask what the objects offer.
    static let introspection: [String: String] = {
        let properties = """
              <interface name="org.freedesktop.DBus.Properties">
                <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
                <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
                <method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/></method>
              </interface>
              <interface name="org.freedesktop.DBus.Introspectable">
                <method name="Introspect"><arg type="s" direction="out"/></method>
              </interface>
            """
        let head = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\" \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n"
        let item = """
              <interface name="org.kde.StatusNotifierItem">
                <property name="Category" type="s" access="read"/>
                <property name="Id" type="s" access="read"/>
                <property name="Title" type="s" access="read"/>
                <property name="Status" type="s" access="read"/>
                <property name="WindowId" type="i" access="read"/>
                <property name="IconName" type="s" access="read"/>
                <property name="IconThemePath" type="s" access="read"/>
                <property name="IconPixmap" type="a(iiay)" access="read"/>
                <property name="AttentionIconName" type="s" access="read"/>
                <property name="AttentionIconPixmap" type="a(iiay)" access="read"/>
                <property name="OverlayIconName" type="s" access="read"/>
                <property name="OverlayIconPixmap" type="a(iiay)" access="read"/>
                <property name="ToolTip" type="(sa(iiay)ss)" access="read"/>
                <property name="ItemIsMenu" type="b" access="read"/>
                <property name="Menu" type="o" access="read"/>
                <method name="Activate"><arg type="i" direction="in"/><arg type="i" direction="in"/></method>
                <method name="SecondaryActivate"><arg type="i" direction="in"/><arg type="i" direction="in"/></method>
                <method name="ContextMenu"><arg type="i" direction="in"/><arg type="i" direction="in"/></method>
                <method name="Scroll"><arg type="i" direction="in"/><arg type="s" direction="in"/></method>
                <signal name="NewTitle"/>
                <signal name="NewIcon"/>
                <signal name="NewAttentionIcon"/>
                <signal name="NewOverlayIcon"/>
                <signal name="NewToolTip"/>
                <signal name="NewStatus"><arg type="s"/></signal>
              </interface>

            """
        let menu = """
              <interface name="com.canonical.dbusmenu">
                <property name="Version" type="u" access="read"/>
                <property name="TextDirection" type="s" access="read"/>
                <property name="Status" type="s" access="read"/>
                <property name="IconThemePath" type="as" access="read"/>
                <method name="GetLayout"><arg type="i" direction="in"/><arg type="i" direction="in"/><arg type="as" direction="in"/><arg type="u" direction="out"/><arg type="(ia{sv}av)" direction="out"/></method>
                <method name="GetGroupProperties"><arg type="ai" direction="in"/><arg type="as" direction="in"/><arg type="a(ia{sv})" direction="out"/></method>
                <method name="GetProperty"><arg type="i" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
                <method name="Event"><arg type="i" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/><arg type="u" direction="in"/></method>
                <method name="EventGroup"><arg type="a(isvu)" direction="in"/><arg type="ai" direction="out"/></method>
                <method name="AboutToShow"><arg type="i" direction="in"/><arg type="b" direction="out"/></method>
                <method name="AboutToShowGroup"><arg type="ai" direction="in"/><arg type="ai" direction="out"/><arg type="ai" direction="out"/></method>
                <signal name="ItemsPropertiesUpdated"><arg type="a(ia{sv})"/><arg type="a(ias)"/></signal>
                <signal name="LayoutUpdated"><arg type="u"/><arg type="i"/></signal>
                <signal name="ItemActivationRequested"><arg type="i"/><arg type="u"/></signal>
              </interface>

            """
        return [itemPath: head + item + properties + "\n</node>\n",
                menuPath: head + menu + properties + "\n</node>\n",
                "/": head + "  <node name=\"StatusNotifierItem\"/>\n  <node name=\"MenuBar\"/>\n</node>\n"]
    }()
}
