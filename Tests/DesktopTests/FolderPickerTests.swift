import Desktop
import Foundation
import Testing

/// The picker's logic with a scripted person and an in-memory server: which screens it
/// shows, in which order, and what it asks the server for.
@Suite("Folder picker")
struct FolderPickerTests {
    /// Answers each question with the next scripted answer, matching by label; records every screen.
    final class ScriptedPerson: PickerDialog {
        /// `okWithNothing`: OK pressed with no row selected (zenity answers an empty line).
        enum Answer { case pick(String), type(String), cancel, okWithNothing }
        var answers: [Answer]
        var screens: [(title: String, prompt: String, labels: [String])] = []
        var told: [String] = []

        init(_ answers: [Answer]) { self.answers = answers }

        func choose(title: String, prompt: String, options: [PickerOption]) throws(PickerFailure) -> String? {
            screens.append((title, prompt, options.map(\.label)))
            guard !answers.isEmpty else { throw PickerFailure("no answer scripted for \(options.map(\.label))") }
            switch answers.removeFirst() {
            case .pick(let label):
                guard let option = options.first(where: { $0.label == label }) else { throw PickerFailure("no row \(label) in \(options.map(\.label))") }
                return option.key
            case .cancel: return nil
            case .okWithNothing: return ""
            case .type: throw PickerFailure("asked to choose, scripted to type")
            }
        }

        func askText(title: String, prompt: String) throws(PickerFailure) -> String? {
            screens.append((title, prompt, []))
            guard !answers.isEmpty else { throw PickerFailure("no answer scripted for \(title)") }
            switch answers.removeFirst() {
            case .type(let text): return text
            case .cancel: return nil
            case .pick, .okWithNothing: throw PickerFailure("asked to type, scripted to pick")
            }
        }

        func tell(title: String, message: String) { told.append(message) }
    }

    /// A server's folder tree in memory, counting what it was asked.
    final class Tree: RemoteFolders {
        var folders: Set<String>
        var listed: [String] = []
        var made: [String] = []
        var failListing = false

        init(_ folders: [String]) { self.folders = Set(folders) }

        func subfolders(of folder: String) throws -> [String] {
            listed.append(folder)
            if failListing { throw Problem(text: "the server did not accept the password for alice") }
            let prefix = folder == "/" ? "/" : folder + "/"
            return folders.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }
                .map { String($0.dropFirst(prefix.count)) }
        }

        func makeFolder(_ path: String) throws {
            made.append(path)
            folders.insert(path)
        }

        struct Problem: Error, CustomStringConvertible { var text: String; var description: String { text } }
    }

    @Test("browse into a folder, create one inside it, send there: one listing per folder shown, one MKCOL")
    func browseAndCreate() throws {
        let tree = Tree(["/Photos", "/Photos/2024", "/Docs"])
        let person = ScriptedPerson([.pick("Photos/"), .pick("New folder…"), .type("Trip"), .pick("Send here: /Photos/Trip")])
        let picker = FolderPicker(dialog: person, accounts: [PickerAccount(name: "home", recent: [], folders: tree)], what: "2 files")
        #expect(try picker.run() == PickedFolder(account: "home", folder: "/Photos/Trip"))
        #expect(tree.made == ["/Photos/Trip"])
        #expect(tree.listed == ["/", "/Photos", "/Photos/Trip"], "lazily, one level at a time")
        #expect(person.screens[0].labels == ["Send here: /", "New folder…", "Docs/", "Photos/"])
        #expect(person.screens[1].labels == ["Send here: /Photos", "Up to /", "New folder…", "2024/"])
        #expect(person.screens[0].title == "Send 2 files to home: /")
        #expect(person.screens[1].title == "Send 2 files to home: /Photos")
    }

    @Test("recent folders come first and choosing one sends there without listing anything else")
    func recentFirst() throws {
        let tree = Tree(["/A"])
        let person = ScriptedPerson([.pick("Recent: /Reports/2026")])
        let picker = FolderPicker(dialog: person, accounts: [PickerAccount(name: "home", recent: ["/Reports/2026", "/A"], folders: tree)],
                                  what: "a.pdf")
        #expect(try picker.run() == PickedFolder(account: "home", folder: "/Reports/2026"))
        #expect(person.screens[0].labels.prefix(2) == ["Recent: /Reports/2026", "Recent: /A"])
    }

    @Test("going up returns to the parent, from the server's own listing kept in memory")
    func up() throws {
        let tree = Tree(["/a", "/a/b"])
        let person = ScriptedPerson([.pick("a/"), .pick("b/"), .pick("Up to /a"), .pick("Up to /"), .pick("Send here: /")])
        let picker = FolderPicker(dialog: person, accounts: [PickerAccount(name: "home", recent: [], folders: tree)], what: "x")
        #expect(try picker.run() == PickedFolder(account: "home", folder: "/"))
        #expect(tree.listed == ["/", "/a", "/a/b"])
    }

    @Test("with several accounts it asks for the account first, then browses that account's server")
    func accountFirst() throws {
        let home = Tree(["/H"]), work = Tree(["/W"])
        let person = ScriptedPerson([.pick("work"), .pick("W/"), .pick("Send here: /W")])
        let picker = FolderPicker(dialog: person, accounts: [PickerAccount(name: "home", recent: ["/H"], folders: home),
                                                             PickerAccount(name: "work", recent: [], folders: work)], what: "x")
        #expect(try picker.run() == PickedFolder(account: "work", folder: "/W"))
        #expect(person.screens[0].labels == ["home", "work"])
        #expect(home.listed.isEmpty)
        #expect(!person.screens[1].labels.contains("Recent: /H"), "recent folders are per account")
    }

    @Test("cancelling gives nothing and creates nothing: on the first screen, inside a folder, or after closing the name question",
          arguments: [0, 1, 2])
    func cancel(step: Int) throws {
        let tree = Tree(["/a"])
        let before: [ScriptedPerson.Answer] = [.pick("a/"), .pick("New folder…")]
        // At step 2 the name question is cancelled first: that only closes it, and the list is cancelled next.
        let person = ScriptedPerson(Array(before.prefix(step)) + [.cancel, .cancel])
        let picker = FolderPicker(dialog: person, accounts: [PickerAccount(name: "home", recent: [], folders: tree)], what: "x")
        #expect(try picker.run() == nil)
        #expect(tree.made.isEmpty)
        #expect(person.answers.count == (step == 2 ? 0 : 1))
    }

    @Test("a bad folder name is explained and asked again; a good one then is made and gone into", arguments: ["", "a/b", "..", "new\nline"])
    func badNames(name: String) throws {
        let tree = Tree([])
        let person = ScriptedPerson([.pick("New folder…"), .type(name), .type("Trip"), .pick("Send here: /Trip")])
        let picker = FolderPicker(dialog: person, accounts: [PickerAccount(name: "home", recent: [], folders: tree)], what: "x")
        #expect(try picker.run() == PickedFolder(account: "home", folder: "/Trip"))
        #expect(tree.made == ["/Trip"])
        #expect(person.told.count == 1)
    }

    @Test("OK with no folder selected says why the list stays, and the list comes again")
    func okWithNothing() throws {
        let tree = Tree(["/a"])
        let person = ScriptedPerson([.okWithNothing, .pick("a/"), .pick("Send here: /a")])
        let picker = FolderPicker(dialog: person, accounts: [PickerAccount(name: "home", recent: [], folders: tree)], what: "x")
        #expect(try picker.run() == PickedFolder(account: "home", folder: "/a"))
        #expect(person.told == ["Nothing was selected. Select a folder in the list, or \"Send here\", then OK; Cancel stops."])
        #expect(person.screens.count == 3)
    }

    @Test("a bad folder name, then going back: nothing is created", arguments: ["a/b", ".."])
    func badNameThenBack(name: String) throws {
        let tree = Tree([])
        let person = ScriptedPerson([.pick("New folder…"), .type(name), .cancel, .cancel])
        let picker = FolderPicker(dialog: person, accounts: [PickerAccount(name: "home", recent: [], folders: tree)], what: "x")
        #expect(try picker.run() == nil)
        #expect(tree.made.isEmpty)
        #expect(person.told.count == 1)
    }

    @Test("a listing that fails is told in words and the folder can still be chosen")
    func listingFails() throws {
        let tree = Tree(["/a"])
        tree.failListing = true
        let person = ScriptedPerson([.pick("Send here: /")])
        let picker = FolderPicker(dialog: person, accounts: [PickerAccount(name: "home", recent: [], folders: tree)], what: "x")
        #expect(try picker.run() == PickedFolder(account: "home", folder: "/"))
        #expect(person.told == ["Could not list / on home: the server did not accept the password for alice"])
    }

    @Test("folder names from the server are escaped before anyone sees them")
    func hostileNames() throws {
        let tree = Tree(["/evil\u{1b}[2Jname"])
        let person = ScriptedPerson([.cancel])
        _ = try FolderPicker(dialog: person, accounts: [PickerAccount(name: "home", recent: [], folders: tree)], what: "x").run()
        #expect(person.screens[0].labels.last == "evil\\x1b[2Jname/")
    }

    @Test("the window program follows the desktop: kdialog first on KDE, zenity elsewhere; a terminal without a display")
    func backendChoice() throws {
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("iu-dialogs-\(getpid())").path
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: bin) }
        for program in ["zenity", "kdialog"] {
            _ = FileManager.default.createFile(atPath: bin + "/" + program, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        }
        func kind(_ env: [String: String], terminal: Bool = false) -> String {
            switch PickerBackend.dialog(environment: env.merging(["PATH": bin]) { a, _ in a }, inputIsTerminal: terminal) {
            case .success(let dialog): return String(describing: type(of: dialog))
            case .failure(let reason): return "none: \(reason)"
            }
        }
        #expect(kind(["DISPLAY": ":1", "XDG_CURRENT_DESKTOP": "KDE"]) == "KDialog")
        #expect(kind(["WAYLAND_DISPLAY": "wayland-0", "XDG_CURRENT_DESKTOP": "ubuntu:GNOME"]) == "ZenityDialog")
        #expect(kind(["DISPLAY": ":1"]) == "ZenityDialog")
        #expect(kind([:], terminal: true) == "TerminalDialog")
        #expect(kind([:]).contains("no display to show the folder picker on and no terminal"))
        try FileManager.default.removeItem(atPath: bin + "/kdialog")
        #expect(kind(["DISPLAY": ":1", "XDG_CURRENT_DESKTOP": "KDE"]) == "ZenityDialog", "KDE without kdialog falls back to zenity")
        try FileManager.default.removeItem(atPath: bin + "/zenity")
        #expect(kind(["DISPLAY": ":1"]).contains("install zenity"))
    }
}
