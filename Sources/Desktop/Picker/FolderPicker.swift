import Platform

/// Asks where on the server files should go: the account first when there are several,
/// then recent folders, then the server's folders one level at a time, with a way up and a
/// way to create a folder. Nothing is listed before it is shown.
///
/// ```swift
/// let picker = FolderPicker(dialog: ZenityDialog(executable: "/usr/bin/zenity", environment: env),
///                           accounts: [PickerAccount(name: "home", recent: ["/Photos"], folders: server)],
///                           what: "3 files")
/// if let target = try picker.run() { ... }   // nil: the person cancelled
/// ```
public struct FolderPicker {
    public var dialog: any PickerDialog
    public var accounts: [PickerAccount]
    /// What is being sent, for titles: "3 files", "IMG_0042.jpg".
    public var what: String
    /// Recent folders shown at most.
    public var recentLimit = 5

    public init(dialog: any PickerDialog, accounts: [PickerAccount], what: String) {
        self.dialog = dialog
        self.accounts = accounts
        self.what = what
    }

    /// The folder chosen, or nil when the person cancelled at any step.
    public func run() throws(PickerFailure) -> PickedFolder? {
        guard let account = try chooseAccount() else { return nil }
        var browser = Browser(account: account)
        while true {
            let screen = browser.screen(recentLimit: recentLimit, dialog: dialog)
            // The folder is in the title too: a window list (and a person switching back) shows where it is.
            let title = "Send \(what) to \(account.name): \(DisplayText.escape(browser.folder))"
            guard let key = try dialog.choose(title: title, prompt: screen.prompt, options: screen.options) else {
                return nil
            }
            if key.isEmpty {
                // OK with no row selected: the same list again would look like nothing happened.
                dialog.tell(title: title, message: "Nothing was selected. Select a folder in the list, or \"Send here\", then OK; Cancel stops.")
                continue
            }
            switch Screen.Choice(key: key) {
            case .here:
                return PickedFolder(account: account.name, folder: browser.folder)
            case .recent(let index) where account.recent.indices.contains(index):
                return PickedFolder(account: account.name, folder: account.recent[index])
            case .up:
                browser.folder = Self.parent(of: browser.folder)
            case .open(let index) where screen.subfolders.indices.contains(index):
                browser.folder = Self.join(browser.folder, screen.subfolders[index])
            case .newFolder:
                try createFolder(in: &browser)
            default:
                continue
            }
        }
    }

    private func chooseAccount() throws(PickerFailure) -> PickerAccount? {
        if accounts.count == 1 { return accounts[0] }
        guard !accounts.isEmpty else { return nil }
        let options = accounts.indices.map { PickerOption(key: "account:\($0)", label: DisplayText.escape(accounts[$0].name)) }
        guard let key = try dialog.choose(title: "Send \(what)", prompt: "Which account should they go to?", options: options),
              key.hasPrefix("account:"), let index = Int(key.dropFirst("account:".count)), accounts.indices.contains(index) else {
            return nil
        }
        return accounts[index]
    }

    /// Asks for a name (again after one that cannot be a folder's, saying why), creates the
    /// folder on the server and goes into it.
    private func createFolder(in browser: inout Browser) throws(PickerFailure) {
        let title = "New folder in \(DisplayText.escape(browser.folder))"
        var name = ""
        while true {
            guard let typed = try dialog.askText(title: title, prompt: "Name of the new folder:") else { return }
            name = typed.trimmingScalars { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            guard let problem = Self.problem(withName: name) else { break }
            dialog.tell(title: title, message: problem)
        }
        let path = Self.join(browser.folder, name)
        do {
            try browser.account.folders.makeFolder(path)
        } catch {
            dialog.tell(title: title, message: "Could not create \(DisplayText.escape(path)) on \(browser.account.name): \(error)")
            return
        }
        browser.forget(browser.folder)
        browser.folder = path
    }

    /// Why a typed name cannot be a folder's name, or nil when it can.
    static func problem(withName name: String) -> String? {
        if name.isEmpty { return "The name is empty; type a name for the new folder." }
        if name == "." || name == ".." { return "\"\(name)\" cannot be a folder's name." }
        if name.contains("/") { return "A folder's name cannot contain \"/\"; create one level at a time." }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) {
            return "A folder's name cannot contain control characters."
        }
        return nil
    }

    static func join(_ folder: String, _ name: String) -> String { folder == "/" ? "/" + name : folder + "/" + name }

    static func parent(of folder: String) -> String {
        guard let slash = folder.lastIndex(of: "/"), slash != folder.startIndex else { return "/" }
        return String(folder[..<slash])
    }
}

/// Where the picker is on one account's server, and what it has listed so far.
struct Browser {
    let account: PickerAccount
    var folder = "/"
    /// Listings already fetched, so going up does not ask the server again.
    private var listings: [String: [String]] = [:]

    init(account: PickerAccount) { self.account = account }

    mutating func forget(_ folder: String) { listings[folder] = nil }

    /// The current folder's screen; a listing that fails is told once and shown empty.
    mutating func screen(recentLimit: Int, dialog: any PickerDialog) -> Screen {
        var note: String?
        if listings[folder] == nil {
            do {
                listings[folder] = try account.folders.subfolders(of: folder)
                    .sorted(by: NaturalOrder.precedes)
            } catch {
                note = "Could not list \(DisplayText.escape(folder)) on \(account.name): \(error)"
                dialog.tell(title: "Send to \(account.name)", message: note!)
            }
        }
        let subfolders = listings[folder] ?? []
        var options: [PickerOption] = []
        if folder == "/" {
            for (index, recent) in account.recent.prefix(recentLimit).enumerated() {
                options.append(PickerOption(key: Screen.Choice.recent(index).key, label: "Recent: \(DisplayText.escape(recent))"))
            }
        }
        options.append(PickerOption(key: Screen.Choice.here.key, label: "Send here: \(DisplayText.escape(folder))"))
        if folder != "/" {
            options.append(PickerOption(key: Screen.Choice.up.key, label: "Up to \(DisplayText.escape(FolderPicker.parent(of: folder)))"))
        }
        options.append(PickerOption(key: Screen.Choice.newFolder.key, label: "New folder…"))
        for (index, name) in subfolders.enumerated() {
            options.append(PickerOption(key: Screen.Choice.open(index).key, label: DisplayText.escape(name) + "/"))
        }
        var prompt = "Choose a folder on \(account.name), or open one.\nNow in: \(DisplayText.escape(folder))"
        if note != nil { prompt += "\n(its folders could not be listed)" }
        return Screen(prompt: prompt, options: options, subfolders: subfolders)
    }
}

/// One screen of the picker: what it says and offers.
struct Screen {
    var prompt: String
    var options: [PickerOption]
    var subfolders: [String]

    enum Choice: Equatable {
        case here, up, newFolder, recent(Int), open(Int), unknown

        var key: String {
            switch self {
            case .here: "here"
            case .up: "up"
            case .newFolder: "new"
            case .recent(let i): "recent:\(i)"
            case .open(let i): "open:\(i)"
            case .unknown: ""
            }
        }

        init(key: String) {
            switch key {
            case "here": self = .here
            case "up": self = .up
            case "new": self = .newFolder
            default:
                let parts = key.split(separator: ":")
                guard parts.count == 2, let index = Int(parts[1]) else { self = .unknown; return }
                self = parts[0] == "recent" ? .recent(index) : parts[0] == "open" ? .open(index) : .unknown
            }
        }
    }
}
