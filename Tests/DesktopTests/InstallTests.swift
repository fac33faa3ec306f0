import Foundation
import Glibc
import Testing
import TestSupport

/// `make install` / `make uninstall` into a temporary home, and the Debian package through
/// dpkg, as a person (or CI, as root) would run them. Both use the release build (`make dist`),
/// which `make test` builds first.
@Suite("Installing like a Linux app", .serialized)
struct InstallTests {
    /// Every path under `folder`, relative, folders included.
    static func tree(_ folder: String) -> [String] {
        (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).sorted()
    }

    static func make(_ arguments: [String], environment: [String: String]) throws -> Shell.Result {
        try Shell.capture("/usr/bin/make", ["--no-print-directory", "-C", Repository.root] + arguments, environment: environment)
    }

    /// What the file managers and the shell read, relative to the home folder, for `make install`.
    static let installed = [
        ".local/bin/instant-upload", ".local/bin/share-to",
        ".local/share/applications/instant-upload-share-to.desktop",
        ".local/share/Thunar/sendto/instant-upload-share-to.desktop",
        ".local/share/kio/servicemenus/instant-upload-share-to.desktop",
        ".local/share/nemo/actions/instant-upload.nemo_action",
        ".local/share/nautilus/scripts/Send to server",
        ".config/caja/scripts/Send to server",
        ".local/share/systemd/user/instant-upload.service",
        ".local/share/man/man1/instant-upload.1.gz", ".local/share/man/man1/share-to.1.gz",
        ".local/share/bash-completion/completions/instant-upload", ".local/share/bash-completion/completions/share-to",
        ".local/share/zsh/site-functions/_instant-upload", ".local/share/zsh/site-functions/_share-to",
        ".local/share/fish/vendor_completions.d/instant-upload.fish", ".local/share/fish/vendor_completions.d/share-to.fish",
    ] + icons.map { ".local/share/" + $0 } + [autostart]

    /// The status icon's pictures, one a state, relative to the data folder (`share`).
    static let icons = ["done", "uploading", "waiting", "attention"].map { "icons/hicolor/scalable/status/instant-upload-\($0).svg" }

    /// The entry that starts the status icon when a person logs in.
    static let autostart = ".config/autostart/instant-upload-tray.desktop"

    /// A person's login environment in `home`: HOME and PATH, none of the test's XDG folders.
    static func loginEnvironment(_ home: TemporaryFolder) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("XDG_") || key.hasPrefix("MAKE") || key == "PREFIX" || key == "NO_TRAY" {
            environment[key] = nil
        }
        environment["HOME"] = home.path
        return environment
    }

    /// Reads an icon as an SVG reader does and says what is wrong with it, if anything: a
    /// 24 or 16 unit square, nothing fetched from elsewhere, no script, no text (whose font
    /// would depend on the machine).
    static let svgChecker = #"""
        import sys, xml.etree.ElementTree as ET
        svg = "{http://www.w3.org/2000/svg}"
        try:
            root = ET.parse(sys.argv[1]).getroot()
        except ET.ParseError as e:
            print("not XML: %s" % e); sys.exit(1)
        problems = []
        if root.tag != svg + "svg": problems.append("the root is %s, not svg" % root.tag)
        if root.get("viewBox") not in ("0 0 24 24", "0 0 16 16"): problems.append("viewBox %r" % root.get("viewBox"))
        drawn = 0
        for e in root.iter():
            if not e.tag.startswith(svg): problems.append("foreign element %s" % e.tag)
            name = e.tag[len(svg):]
            if name in ("script", "text", "tspan", "textPath", "foreignObject", "image", "use", "style", "a"): problems.append("a %s element" % name)
            if name in ("path", "circle", "rect", "ellipse", "polygon", "polyline", "line"): drawn += 1
            for key, value in e.attrib.items():
                if key.endswith("href") or key.startswith("on") or "url(" in value: problems.append("%s=%r" % (key, value))
        if drawn < 2: problems.append("%d shapes" % drawn)
        print("; ".join(problems)); sys.exit(1 if problems else 0)
        """#

    /// Checks the icons in `folder` (a data folder: `~/.local/share`, `/usr/share`).
    static func checkIcons(in folder: String) throws {
        for icon in icons {
            let check = try Shell.capture("/usr/bin/python3", ["-I", "-c", svgChecker, folder + "/" + icon])
            #expect(check.status == 0, "\(icon): \(check.stdout)\(check.stderr)")
        }
    }

    /// Checks the login entry at `path` starts `program`'s status icon and passes desktop-file-validate.
    static func checkAutostart(_ path: String, program: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("Exec=\(program) tray"), "\(path) does not start \(program) tray:\n\(text)")
        #expect(lines.contains("TryExec=\(program)"), "\(path):\n\(text)")
        #expect(lines.contains("Type=Application") && lines.contains("NoDisplay=true") && lines.contains("Icon=instant-upload-done"), "\(path):\n\(text)")
        #expect(!text.contains("@BINDIR@"), "\(path) still has a placeholder")
        let validate = try Shell.capture("/usr/bin/desktop-file-validate", [path])
        #expect(validate.status == 0 && (validate.stdout + validate.stderr).isEmpty, "desktop-file-validate: \(validate.stdout)\(validate.stderr)")
    }

    /// The entries that start share-to, and the form each is checked with.
    static let launchers = [
        ".local/share/applications/instant-upload-share-to.desktop", ".local/share/Thunar/sendto/instant-upload-share-to.desktop",
        ".local/share/kio/servicemenus/instant-upload-share-to.desktop", ".local/share/nemo/actions/instant-upload.nemo_action",
        ".local/share/nautilus/scripts/Send to server", ".config/caja/scripts/Send to server",
    ]

    @Test("make install into a temporary home puts every entry in place, each starting the installed share-to; make uninstall leaves nothing behind")
    func installAndUninstall() throws {
        let home = TemporaryFolder("iu-install-home")
        // A person's login environment: HOME and PATH, none of the test's XDG folders.
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("XDG_") || key.hasPrefix("MAKE") || key == "PREFIX" || key == "NO_TRAY" { environment[key] = nil }
        environment["HOME"] = home.path
        // With ~/.local/bin on the PATH, as desktop sessions have it (man finds ~/.local/share/man from it).
        environment["PATH"] = home.path + "/.local/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
        try FileManager.default.createDirectory(atPath: home.path + "/Documents", withIntermediateDirectories: true)
        // The build leaves the tools' caches in the home folder (~/.cache, ~/.local/share/bin):
        // they come first, so what is compared is exactly what install adds and uninstall takes away.
        let dist = try Self.make(["dist"], environment: environment)
        try #require(dist.status == 0, "make dist: \(dist.stderr)")
        let before = Self.tree(home.path)

        let install = try Self.make(["install"], environment: environment)
        try #require(install.status == 0, "make install: \(install.stdout)\n\(install.stderr)")
        for path in Self.installed {
            #expect(FileManager.default.fileExists(atPath: home.path + "/" + path), "\(path) is missing after make install")
        }
        let shareTo = home.path + "/.local/bin/share-to"
        for path in Self.launchers {
            let text = try String(contentsOfFile: home.path + "/" + path, encoding: .utf8)
            #expect(text.contains(shareTo + " ") || text.contains(shareTo + "\""), "\(path) does not start \(shareTo):\n\(text)")
            #expect(!text.contains("@BINDIR@"), "\(path) still has a placeholder")
        }
        for script in [".local/share/nautilus/scripts/Send to server", ".config/caja/scripts/Send to server"] {
            #expect(access(home.path + "/" + script, X_OK) == 0, "\(script) must be executable")
        }
        let unit = try String(contentsOfFile: home.path + "/.local/share/systemd/user/instant-upload.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\(home.path)/.local/bin/instant-upload run"))
        try Self.checkAutostart(home.path + "/" + Self.autostart, program: home.path + "/.local/bin/instant-upload")
        try Self.checkIcons(in: home.path + "/.local/share")
        // hicolor needs no cache, and none is made: one would hide icons installed later.
        #expect(!FileManager.default.fileExists(atPath: home.path + "/.local/share/icons/hicolor/icon-theme.cache"))

        // Each format's own validator, where there is one (the file-manager entries: FileManagerEntryTests).
        let verify = try Shell.capture("/usr/bin/systemd-analyze", ["verify", home.path + "/.local/share/systemd/user/instant-upload.service"],
                                       environment: environment)
        #expect(verify.status == 0, "systemd-analyze verify: \(verify.stdout)\(verify.stderr)")
        for page in ["instant-upload", "share-to"] {
            let man = try Shell.capture("/usr/bin/man", ["--warnings", "-l", home.path + "/.local/share/man/man1/\(page).1.gz"],
                                        environment: environment.merging(["MANPAGER": "cat", "MANWIDTH": "80", "LC_ALL": "C.UTF-8"]) { _, b in b })
            #expect(man.status == 0 && man.stderr.isEmpty, "man \(page): \(man.stderr)")
            #expect(man.stdout.contains("SYNOPSIS"))
        }
        for completion in [".local/share/bash-completion/completions/instant-upload", ".local/share/bash-completion/completions/share-to"] {
            let syntax = try Shell.capture("/bin/bash", ["-n", home.path + "/" + completion])
            #expect(syntax.status == 0, "\(completion): \(syntax.stderr)")
        }
        // The installed programs run on their own (the Swift runtime is linked in).
        let help = try Shell.capture(shareTo, ["--help"], environment: environment)
        #expect(help.status == 0 && help.stdout.contains("usage: share-to"), "\(help.stderr)")
        let libraries = try Shell.run("/usr/bin/ldd", [shareTo])
        #expect(!libraries.contains("libswiftCore") && !libraries.contains("libFoundation"), "the Swift runtime must be inside: \(libraries)")
        // The C++ library the runtime needs is linked in too; libcurl and libexif are loaded on first use.
        for library in ["libstdc++", "libcurl", "libexif"] {
            #expect(!libraries.contains(library), "\(library) is loaded at every start: \(libraries)")
        }

        let uninstall = try Self.make(["uninstall"], environment: environment)
        #expect(uninstall.status == 0, "make uninstall: \(uninstall.stdout)\n\(uninstall.stderr)")
        #expect(Self.tree(home.path) == before, "left behind: \(Set(Self.tree(home.path)).subtracting(before).sorted())")
    }

    @Test("make install into a home that already has the folders removes only its own files")
    func uninstallKeepsWhatWasThere() throws {
        let home = TemporaryFolder("iu-install-home")
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("XDG_") || key.hasPrefix("MAKE") || key == "PREFIX" || key == "NO_TRAY" { environment[key] = nil }
        environment["HOME"] = home.path
        try home.file(".local/share/applications/other-app.desktop", bytes: Array("[Desktop Entry]\n".utf8))
        try home.file(".local/bin/other-tool", bytes: Array("#!/bin/sh\n".utf8))
        #expect(try Self.make(["dist"], environment: environment).status == 0)
        let before = Self.tree(home.path)
        #expect(try Self.make(["install"], environment: environment).status == 0)
        #expect(try Self.make(["uninstall"], environment: environment).status == 0)
        #expect(Self.tree(home.path) == before)
    }

    @Test("make install NO_TRAY=1 leaves out the status icon's login entry, and takes away one an earlier install put there; make uninstall leaves nothing behind")
    func installWithoutTray() throws {
        let home = TemporaryFolder("iu-install-home")
        let environment = Self.loginEnvironment(home)
        try FileManager.default.createDirectory(atPath: home.path + "/.config", withIntermediateDirectories: true)
        let dist = try Self.make(["dist"], environment: environment)
        try #require(dist.status == 0, "make dist: \(dist.stderr)")
        let before = Self.tree(home.path)
        let entry = home.path + "/" + Self.autostart
        let manifest = home.path + "/.local/share/instant-upload/install-manifest"

        let plain = try Self.make(["install"], environment: environment)
        try #require(plain.status == 0, "make install: \(plain.stdout)\n\(plain.stderr)")
        #expect(FileManager.default.fileExists(atPath: entry))
        let withoutTray = try Self.make(["install", "NO_TRAY=1"], environment: environment)
        try #require(withoutTray.status == 0, "make install NO_TRAY=1: \(withoutTray.stdout)\n\(withoutTray.stderr)")
        #expect(!FileManager.default.fileExists(atPath: entry), "make install NO_TRAY=1 kept \(Self.autostart)")
        let listed = try String(contentsOfFile: manifest, encoding: .utf8)
        #expect(!listed.contains("autostart/instant-upload-tray.desktop"), "the manifest still lists the login entry:\n\(listed)")
        // The pictures stay: `instant-upload tray` started by hand shows them.
        for icon in Self.icons {
            #expect(FileManager.default.fileExists(atPath: home.path + "/.local/share/" + icon), "\(icon) is missing")
            #expect(listed.contains("/.local/share/" + icon + "\n"), "the manifest lacks \(icon)")
        }
        let uninstall = try Self.make(["uninstall"], environment: environment)
        #expect(uninstall.status == 0, "make uninstall: \(uninstall.stdout)\n\(uninstall.stderr)")
        #expect(Self.tree(home.path) == before, "left behind: \(Set(Self.tree(home.path)).subtracting(before).sorted())")

        // Straight from the script, the same option.
        let script = try Shell.capture("/bin/sh", [Repository.root + "/packaging/install.sh", "install", Repository.root + "/.build/dist/release", "--no-tray"],
                                       environment: environment)
        #expect(script.status == 0, "install.sh install BIN_DIR --no-tray: \(script.stdout)\(script.stderr)")
        #expect(!FileManager.default.fileExists(atPath: entry) && FileManager.default.fileExists(atPath: home.path + "/.local/bin/instant-upload"))
        let unknown = try Shell.capture("/bin/sh", [Repository.root + "/packaging/install.sh", "install", Repository.root + "/.build/dist/release", "--no-trays"],
                                        environment: environment)
        #expect(unknown.status == 2 && unknown.stderr.contains("--no-trays"), "an unknown option: \(unknown.status) \(unknown.stderr)")
        #expect(try Self.make(["uninstall"], environment: environment).status == 0)
        #expect(Self.tree(home.path) == before, "left behind: \(Set(Self.tree(home.path)).subtracting(before).sorted())")
    }

    @Test("an icon cache already in the home's hicolor folder is rebuilt by make install and by make uninstall, and stays")
    func iconCache() throws {
        let home = TemporaryFolder("iu-install-home")
        let environment = Self.loginEnvironment(home)
        let theme = home.path + "/.local/share/icons/hicolor"
        let cache = theme + "/icon-theme.cache"
        // A cache some other program left, of a hicolor folder with no index.theme.
        try home.file(".local/share/icons/hicolor/scalable/apps/other-app.svg",
                      bytes: Array(#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="6"/></svg>"#.utf8))
        let made = try Shell.capture("/usr/bin/gtk-update-icon-cache", ["--quiet", "--ignore-theme-index", theme], environment: environment)
        try #require(made.status == 0, "gtk-update-icon-cache (gtk-update-icon-cache, a dependency of GTK's icon theme): \(made.stderr)")
        func names(_ icon: String) throws -> Bool {
            try Data(contentsOf: URL(fileURLWithPath: cache)).range(of: Data(icon.utf8)) != nil
        }
        try #require(try names("other-app") && !names("instant-upload-done"))
        #expect(try Self.make(["dist"], environment: environment).status == 0)
        let before = Self.tree(home.path)

        let install = try Self.make(["install"], environment: environment)
        try #require(install.status == 0, "make install: \(install.stdout)\n\(install.stderr)")
        for state in ["done", "uploading", "waiting", "attention"] {
            #expect(try names("instant-upload-" + state), "the cache does not name instant-upload-\(state) after make install")
        }
        #expect(try names("other-app"))
        let uninstall = try Self.make(["uninstall"], environment: environment)
        #expect(uninstall.status == 0, "make uninstall: \(uninstall.stdout)\n\(uninstall.stderr)")
        #expect(try !names("instant-upload-done"), "the cache still names the icons after make uninstall")
        #expect(try names("other-app"))
        #expect(Self.tree(home.path) == before, "left behind: \(Set(Self.tree(home.path)).subtracting(before).sorted())")
    }

    @Test("make deb builds a package with no lintian errors; dpkg -i, share-to --help from /usr/bin, dpkg -r and --purge: all clean")
    func debianPackage() throws {
        guard getuid() == 0 else {
            throw TestFailure("installing a Debian package needs root (CI runs as root); run this test as root")
        }
        let status = try Shell.capture("/usr/bin/dpkg-query", ["-W", "-f=${Status}", "instant-upload"])
        try #require(!status.stdout.contains("installed"), "instant-upload is already installed on this machine; remove it first (dpkg -r instant-upload)")
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("MAKE") { environment[key] = nil }
        let build = try Self.make(["deb"], environment: environment)
        try #require(build.status == 0, "make deb: \(build.stdout)\n\(build.stderr)")
        let package = try #require(build.stdout.split(separator: "\n").last.map(String.init).flatMap { $0.hasSuffix(".deb") ? $0 : nil },
                                   "make deb did not name the package: \(build.stdout)")

        let fields = try Shell.run("/usr/bin/dpkg-deb", ["--field", package, "Depends"])
        for library in ["libsqlite3-0", "libcurl4", "libssl3", "libexif12", "libdbus-1-3", "libc6"] {
            #expect(fields.contains(library), "Depends lacks \(library): \(fields)")
        }
        let lint = try Shell.capture("/usr/bin/lintian", ["--fail-on", "error", "--tag-display-limit", "0", package])
        #expect(lint.status == 0, "lintian: \(lint.stdout)\(lint.stderr)")
        #expect(!lint.stdout.contains("E: "), "lintian: \(lint.stdout)")

        let install = try Shell.capture("/usr/bin/dpkg", ["-i", package])
        defer { _ = try? Shell.capture("/usr/bin/dpkg", ["--purge", "instant-upload"]) }
        try #require(install.status == 0, "dpkg -i: \(install.stdout)\(install.stderr)")
        let files = try Shell.run("/usr/bin/dpkg", ["-L", "instant-upload"]).split(separator: "\n").map(String.init)
        for expected in ["/usr/bin/share-to", "/usr/bin/instant-upload", "/usr/share/applications/instant-upload-share-to.desktop",
                         "/usr/share/Thunar/sendto/instant-upload-share-to.desktop", "/usr/share/kio/servicemenus/instant-upload-share-to.desktop",
                         "/usr/share/nemo/actions/instant-upload.nemo_action", "/usr/lib/systemd/user/instant-upload.service",
                         "/usr/share/man/man1/share-to.1.gz", "/usr/share/man/man1/instant-upload.1.gz",
                         "/usr/share/bash-completion/completions/share-to", "/usr/share/zsh/vendor-completions/_share-to",
                         "/usr/share/fish/vendor_completions.d/share-to.fish", "/usr/share/doc/instant-upload/copyright",
                         "/etc/xdg/autostart/instant-upload-tray.desktop"] + Self.icons.map({ "/usr/share/" + $0 }) {
            #expect(files.contains(expected), "the package lacks \(expected)")
        }
        // The login entry is a conffile: dpkg keeps a person's edits to it, and the package
        // lists it as one so lintian has nothing to say about a file in /etc.
        let conffiles = try Shell.run("/usr/bin/dpkg-query", ["-W", "-f=${Conffiles}", "instant-upload"])
        #expect(conffiles.contains("/etc/xdg/autostart/instant-upload-tray.desktop "), "conffiles: \(conffiles)")
        try Self.checkAutostart("/etc/xdg/autostart/instant-upload-tray.desktop", program: "/usr/bin/instant-upload")
        try Self.checkIcons(in: "/usr/share")
        // hicolor-icon-theme's trigger rebuilds the system's icon cache, which then names the icons.
        if let cache = FileManager.default.contents(atPath: "/usr/share/icons/hicolor/icon-theme.cache") {
            #expect(cache.range(of: Data("instant-upload-attention".utf8)) != nil, "the hicolor icon cache was not rebuilt")
        }
        let desktop = try String(contentsOfFile: "/usr/share/applications/instant-upload-share-to.desktop", encoding: .utf8)
        #expect(desktop.contains("Exec=/usr/bin/share-to %U"))
        let help = try Shell.capture("/usr/bin/share-to", ["--help"], environment: ["PATH": "/usr/bin:/bin", "HOME": "/tmp"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.stdout.contains("usage: share-to ") && help.stdout.contains("[--to REMOTE_DIR]") && help.stdout.contains("FILE_OR_URI..."), "\(help.stdout)")

        // dpkg -r keeps conffiles, as Debian does; the entry's TryExec then finds no program,
        // so no session starts it. dpkg --purge removes it too.
        let remove = try Shell.capture("/usr/bin/dpkg", ["-r", "instant-upload"])
        #expect(remove.status == 0, "dpkg -r: \(remove.stdout)\(remove.stderr)")
        for path in files where !path.hasPrefix("/etc/") {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
                Issue.record("\(path) is still there after dpkg -r")
            }
        }
        let after = try Shell.capture("/usr/bin/dpkg-query", ["-W", "-f=${Status}", "instant-upload"])
        #expect(!after.stdout.contains(" installed"), "\(after.stdout)")
        let purge = try Shell.capture("/usr/bin/dpkg", ["--purge", "instant-upload"])
        #expect(purge.status == 0, "dpkg --purge: \(purge.stdout)\(purge.stderr)")
        for path in files where path.hasPrefix("/etc/") {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
                Issue.record("\(path) is still there after dpkg --purge")
            }
        }
    }
}
