/// The menu as com.canonical.dbusmenu serves it: numbered items, a layout revision that
/// changes whenever the menu does, and the action behind each number.
///
/// An item keeps its number across updates while it stays (a command by what it does, text
/// by where it sits), so a click sent just before the menu changed still means what the
/// person saw; numbers of items that went away are never given again.
struct DBusMenu {
    struct Node: Equatable {
        var properties: [(String, BusValue)]
        var children: [Int32]

        static func == (a: Node, b: Node) -> Bool {
            a.children == b.children && a.properties.map(\.0) == b.properties.map(\.0) && a.properties.map(\.1) == b.properties.map(\.1)
        }
    }

    private(set) var revision: UInt32 = 1
    private(set) var nodes: [Int32: Node] = [0: Node(properties: [("children-display", .string("submenu"))], children: [])]
    private(set) var actions: [Int32: TrayAction] = [:]
    private var numbers: [String: Int32] = [:]
    private var next: Int32 = 1

    /// Takes the new menu; true when anything a host shows changed (the revision moved on).
    mutating func update(_ items: [TrayMenuItem]) -> Bool {
        var nodes: [Int32: Node] = [:]
        var actions: [Int32: TrayAction] = [:]
        var numbers: [String: Int32] = [:]
        let root = add(items, parentKey: "", into: &nodes, &actions, &numbers)
        nodes[0] = Node(properties: [("children-display", .string("submenu"))], children: root)
        self.numbers = numbers
        self.actions = actions
        guard nodes != self.nodes else { return false }
        self.nodes = nodes
        revision &+= 1
        return true
    }

    private mutating func add(_ items: [TrayMenuItem], parentKey: String, into nodes: inout [Int32: Node],
                              _ actions: inout [Int32: TrayAction], _ numbers: inout [String: Int32]) -> [Int32] {
        var ids: [Int32] = []
        for (index, item) in items.enumerated() {
            var key = parentKey + "/" + (item.action.map { "\($0)" } ?? (item.isSeparator ? "-" : "text") + "#\(index)")
            while numbers[key] != nil { key += "'" }
            let id = self.numbers[key] ?? { defer { next &+= 1 }; return next }()
            numbers[key] = id
            var properties: [(String, BusValue)] = []
            if item.isSeparator {
                properties.append(("type", .string("separator")))
            } else {
                properties.append(("label", .string(Self.label(item.label))))
                properties.append(("enabled", .boolean(item.enabled)))
            }
            let children = add(item.children, parentKey: key, into: &nodes, &actions, &numbers)
            if !children.isEmpty { properties.append(("children-display", .string("submenu"))) }
            nodes[id] = Node(properties: properties, children: children)
            if let action = item.action { actions[id] = action }
            ids.append(id)
        }
        return ids
    }

    /// An underscore marks the next letter as the access key in dbusmenu labels; a file
    /// name's own underscores are doubled to stay text.
    static func label(_ text: String) -> String { text.replacing("_", with: "__") }

    /// `(ia{sv}av)`: the item, its properties (only `names` when some are asked for) and its
    /// children `depth` levels down (-1: all).
    func layout(_ id: Int32, depth: Int32, names: [String]) -> BusValue? {
        guard let node = nodes[id] else { return nil }
        let children: [BusValue] = depth == 0 ? [] : node.children.compactMap { child in
            layout(child, depth: depth < 0 ? -1 : depth - 1, names: names).map(BusValue.variant)
        }
        return .structure([.int32(id), properties(id, names: names) ?? .variantDictionary([]), .array(elementSignature: "v", children)])
    }

    func properties(_ id: Int32, names: [String]) -> BusValue? {
        guard let node = nodes[id] else { return nil }
        return .variantDictionary(node.properties.filter { names.isEmpty || names.contains($0.0) })
    }
}

