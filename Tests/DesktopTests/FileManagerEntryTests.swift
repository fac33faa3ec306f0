import Foundation
import Glibc
import Testing
import TestSupport

/// Every file-manager entry in packaging/, as `install.sh` writes it, read by its format's
/// own checker: desktop-file-validate for desktop entries, the shell's parser for the
/// scripts, GLib's key-file parser (what Nemo loads actions with) for the Nemo action.
@Suite("File-manager entries pass their formats' checkers")
struct FileManagerEntryTests {
    /// The entries installed into a temporary home; the program is a stand-in (a copy of
    /// `true`, a program `install.sh` can strip), as no checker runs it.
    struct Installed {
        let home = TemporaryFolder("iu-entries-home")

        init() throws {
            let bin = TemporaryFolder("iu-entries-bin")
            let path = try bin.file("instant-upload", bytes: Array(try Data(contentsOf: URL(fileURLWithPath: "/bin/true"))))
            chmod(path, 0o755)
            var environment = ProcessInfo.processInfo.environment
            for key in environment.keys where key.hasPrefix("XDG_") || key == "PREFIX" || key == "DESTDIR" || key == "SYSTEM" {
                environment[key] = nil
            }
            environment["HOME"] = home.path
            let install = try Shell.capture("/bin/sh", [Repository.root + "/packaging/install.sh", "install", bin.path], environment: environment)
            guard install.status == 0 else { throw TestFailure("install.sh install: \(install.stdout)\(install.stderr)") }
        }

        func path(_ relative: String) -> String { home.path + "/" + relative }
    }

    static let applications = ".local/share/applications/instant-upload-share-to.desktop"
    static let thunar = ".local/share/Thunar/sendto/instant-upload-share-to.desktop"
    static let dolphin = ".local/share/kio/servicemenus/instant-upload-share-to.desktop"
    static let nemo = ".local/share/nemo/actions/instant-upload.nemo_action"
    static let scripts = [".local/share/nautilus/scripts/Send to server", ".config/caja/scripts/Send to server"]

    /// What desktop-file-validate says about `path`, one line per finding, without the path.
    static func validate(_ path: String) throws -> (status: Int32, findings: [String]) {
        let r = try Shell.capture("/usr/bin/desktop-file-validate", [path])
        let lines = (r.stdout + r.stderr).split(separator: "\n").map { line in
            line.hasPrefix(path + ": ") ? String(line.dropFirst(path.count + 2)) : String(line)
        }
        return (r.status, lines)
    }

    @Test("the Open With entry and Thunar's Send To entry pass desktop-file-validate without a word")
    func desktopEntries() throws {
        let installed = try Installed()
        for entry in [Self.applications, Self.thunar] {
            let check = try Self.validate(installed.path(entry))
            #expect(check.status == 0 && check.findings.isEmpty, "\(entry): \(check.findings)")
        }
    }

    /// A Dolphin service menu is `Type=Service` with `MimeType` and `Actions` in its main
    /// group, as KDE documents it; the desktop entry specification allows those two keys only
    /// in applications, so desktop-file-validate objects to them and to nothing else.
    static let kdeServiceMenuKeys = [
        "error: key \"MimeType\" is present in group \"Desktop Entry\", but the type is \"Service\" while this key is only valid for type \"Application\"",
        "error: key \"Actions\" is present in group \"Desktop Entry\", but the type is \"Service\" while this key is only valid for type \"Application\"",
    ]

    @Test("Dolphin's service menu passes desktop-file-validate but for the two keys KDE's service menus need")
    func dolphinServiceMenu() throws {
        let installed = try Installed()
        let check = try Self.validate(installed.path(Self.dolphin))
        let other = check.findings.filter { !Self.kdeServiceMenuKeys.contains($0) }
        #expect(other.isEmpty, "desktop-file-validate: \(other)")
        let text = try String(contentsOfFile: installed.path(Self.dolphin), encoding: .utf8)
        #expect(text.contains("\nType=Service\n") && text.contains("\n[Desktop Action sendToServer]\n"), "\(text)")
    }

    @Test("the Nautilus and Caja scripts parse as sh and as bash, and start with #!/bin/sh")
    func scripts() throws {
        let installed = try Installed()
        for script in Self.scripts {
            let text = try String(contentsOfFile: installed.path(script), encoding: .utf8)
            #expect(text.hasPrefix("#!/bin/sh\n"), "\(script) does not start with #!/bin/sh")
            for shell in ["/bin/sh", "/bin/dash", "/bin/bash"] {
                let parse = try Shell.capture(shell, ["-n", installed.path(script)])
                #expect(parse.status == 0 && parse.stderr.isEmpty, "\(shell) -n \(script): \(parse.stderr)")
            }
        }
    }

    /// Loads a Nemo action the way Nemo does (a GLib key file) and prints what Nemo needs
    /// of it, or the parser's complaint.
    static let nemoReader = """
        import sys
        from gi.repository import GLib
        k = GLib.KeyFile()
        try:
            k.load_from_file(sys.argv[1], GLib.KeyFileFlags.NONE)
        except GLib.Error as e:
            print("unreadable: " + e.message); sys.exit(1)
        print("groups=" + ",".join(k.get_groups()[0]))
        for key in k.get_keys("Nemo Action")[0]:
            print(key + "=" + k.get_string("Nemo Action", key))
        """

    @Test("the Nemo action loads as a key file with a Name, an Exec taking URIs, a known Selection and what it applies to")
    func nemoAction() throws {
        let installed = try Installed()
        let read = try Shell.capture("/usr/bin/python3", ["-c", Self.nemoReader, installed.path(Self.nemo)])
        try #require(read.status == 0, "python3 with GLib (python3-gi) reads the action: \(read.stdout)\(read.stderr)")
        var keys: [String: String] = [:]
        for line in read.stdout.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            keys[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        #expect(keys["groups"] == "Nemo Action", "Nemo reads the group [Nemo Action] and only it: \(read.stdout)")
        #expect(keys["Name"]?.isEmpty == false, "\(read.stdout)")
        #expect(keys["Exec"] == installed.path(".local/bin/share-to") + " %U", "\(read.stdout)")
        // Nemo's selection conditions (case does not matter to it); anything else hides the action.
        #expect(["s", "single", "m", "multiple", "any", "none", "notnone"].contains(keys["Selection"]?.lowercased() ?? ""), "\(read.stdout)")
        #expect(!(keys["Extensions"] ?? "").isEmpty || !(keys["Mimetypes"] ?? "").isEmpty,
                "Nemo drops an action with neither Extensions nor Mimetypes: \(read.stdout)")
    }
}
