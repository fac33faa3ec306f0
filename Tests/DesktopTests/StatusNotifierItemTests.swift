@testable import Desktop
import Testing

/// The status icon's answers to a panel, without a bus: the menu's numbering and revisions,
/// the properties' types, and what a hostile or confused caller gets.
@Suite("StatusNotifierItem and its dbusmenu")
struct StatusNotifierItemTests {
    static func picture(_ mood: TrayPicture.Mood = .done, _ menu: [TrayMenuItem]) -> TrayPicture {
        TrayPicture(mood: mood, title: "instant-upload", body: "nothing queued", menu: menu)
    }

    static let standard: [TrayMenuItem] = [.text("nothing queued"), .separator, TrayMenuItem("Pause all", action: .pauseAll),
                                           TrayMenuItem("Quit tray", action: .quit)]

    @Test("an item keeps its number while it stays; a new item never takes an old number; the revision moves only on change")
    func stableNumbers() throws {
        var menu = DBusMenu()
        let first = menu.update(Self.standard)
        #expect(first)
        let revision = menu.revision
        let pause = try #require(menu.actions.first { $0.value == .pauseAll }?.key)
        let again = menu.update(Self.standard)
        #expect(!again, "the same menu: no new revision")
        #expect(menu.revision == revision)

        // The status line changes and Pause all gives way to Resume all.
        var next = Self.standard
        next[0] = .text("1 uploading")
        next[2] = TrayMenuItem("Resume all", action: .resumeAll)
        let changed = menu.update(next)
        #expect(changed)
        #expect(menu.revision == revision + 1)
        #expect(menu.actions[pause] == nil, "a click on the old number does nothing now")
        let resume = try #require(menu.actions.first { $0.value == .resumeAll }?.key)
        #expect(resume > pause, "numbers are never given again")
        #expect(menu.actions.first { $0.value == .quit }?.key == 4, "Quit tray kept its number")
        #expect(menu.nodes[1]?.properties.first { $0.0 == "label" }?.1 == .string("1 uploading"), "the status line kept its number")
    }

    @Test("labels double their underscores (dbusmenu reads one as an access key); separators and submenus say what they are")
    func properties() throws {
        var menu = DBusMenu()
        _ = menu.update([TrayMenuItem("IMG_0001.jpg", action: .openUploaded(account: "home", remotePath: "/IMG_0001.jpg")), .separator,
                         TrayMenuItem("Why it failed", children: [.text("#3 a.jpg: refused")])])
        #expect(menu.properties(1, names: ["label"]) == .variantDictionary([("label", .string("IMG__0001.jpg"))]))
        #expect(menu.properties(2, names: []) == .variantDictionary([("type", .string("separator"))]))
        let layout = try #require(menu.layout(3, depth: -1, names: ["children-display"]))
        guard case .structure(let parts) = layout, parts.count == 3, case .array("v", let children) = parts[2] else {
            Issue.record("not (ia{sv}av): \(layout)")
            return
        }
        #expect(parts[1] == .variantDictionary([("children-display", .string("submenu"))]))
        #expect(children.count == 1)
        #expect(layout.signature == "(ia{sv}av)")
        // Depth 0: the item alone.
        guard case .structure(let alone)? = menu.layout(0, depth: 0, names: []), case .array(_, let none) = alone[2] else {
            Issue.record("no root")
            return
        }
        #expect(none.isEmpty)
        #expect(menu.layout(99, depth: -1, names: []) == nil)
    }

    @Test("GetAll answers every property with the protocol's types; the icon and Status follow the mood")
    func itemProperties() throws {
        let item = StatusNotifierItem(Self.picture(.attention, Self.standard), iconName: { $0.fallbackIconName })
        let call = BusCall(sender: ":1.1", path: "/StatusNotifierItem", interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                           arguments: [.string("org.kde.StatusNotifierItem")])
        guard case .values(let values)? = item.answer(call), case .array("{sv}", let entries)? = values.first else {
            Issue.record("GetAll did not answer a{sv}")
            return
        }
        var found: [String: BusValue] = [:]
        for case .dictEntry(.string(let key), .variant(let value)) in entries { found[key] = value }
        #expect(found["Status"] == .string("NeedsAttention"))
        #expect(found["IconName"] == .string("dialog-warning"))
        #expect(found["ItemIsMenu"] == .boolean(false))
        #expect(found["Menu"] == .objectPath("/MenuBar"))
        #expect(found["ToolTip"]?.signature == "(sa(iiay)ss)")
        #expect(found["IconPixmap"]?.signature == "a(iiay)")
        #expect(found["WindowId"]?.signature == "i")
    }

    @Test("what a confused caller gets: errors, never a crash or an action")
    func hostileCalls() {
        let item = StatusNotifierItem(Self.picture(.done, Self.standard), iconName: { $0.iconName })
        func call(_ path: String, _ interface: String, _ member: String, _ arguments: [BusValue]) -> BusAnswer? {
            item.answer(BusCall(sender: ":1.9", path: path, interface: interface, member: member, arguments: arguments))
        }
        let menu = "com.canonical.dbusmenu"
        #expect(call("/MenuBar", menu, "Event", [.int32(999), .string("clicked"), .variant(.int32(0)), .uint32(0)])
                == .invalidArguments("no menu item 999"))
        if case .error? = call("/MenuBar", menu, "GetLayout", [.string("zero")]) {} else { Issue.record("GetLayout with a string answered") }
        if case .error? = call("/StatusNotifierItem", "org.freedesktop.DBus.Properties", "Get", [.string("org.kde.StatusNotifierItem"), .string("Nope")]) {} else {
            Issue.record("an unknown property answered")
        }
        if case .error? = call("/StatusNotifierItem", "org.freedesktop.DBus.Properties", "Set", [.string("org.kde.StatusNotifierItem"), .string("Status"), .variant(.string("Active"))]) {} else {
            Issue.record("Set was taken")
        }
        #expect(call("/Elsewhere", "org.kde.StatusNotifierItem", "Activate", [.int32(0), .int32(0)]) == nil, "other paths: libdbus's UnknownMethod")
        // A click that is not "clicked" (hovered, opened) does nothing.
        _ = call("/MenuBar", menu, "Event", [.int32(3), .string("hovered"), .variant(.int32(0)), .uint32(0)])
        #expect(item.takeRequests().isEmpty)
        _ = call("/MenuBar", menu, "EventGroup", [.array(elementSignature: "(isvu)", [.structure([.int32(3), .string("clicked"), .variant(.int32(0)), .uint32(0)]),
                                                                                    .structure([.int32(77), .string("clicked"), .variant(.int32(0)), .uint32(0)])])])
        #expect(item.takeRequests() == [.pauseAll])
    }

    @Test("a change sends only the signals that say what changed")
    func signals() {
        let item = StatusNotifierItem(Self.picture(.done, Self.standard), iconName: { $0.iconName })
        #expect(item.update(Self.picture(.done, Self.standard)).isEmpty, "nothing changed, nothing sent")
        let toUploading = item.update(Self.picture(.uploading, Self.standard)).map(\.member)
        #expect(toUploading.contains("NewIcon") && toUploading.contains("NewStatus") && toUploading.contains("NewToolTip"))
        #expect(!toUploading.contains("LayoutUpdated"))
        var menu = Self.standard
        menu[0] = .text("1 uploading")
        #expect(item.update(Self.picture(.uploading, menu)).map(\.member) == ["LayoutUpdated"])
    }
}
