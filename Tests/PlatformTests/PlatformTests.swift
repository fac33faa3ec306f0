import Foundation
import Glibc
import Platform
import Testing
import TestSupport

@Suite("Names shown to people")
struct DisplayTextTests {
    @Test("large counts get thousands separators")
    func grouped() {
        #expect(DisplayText.grouped(13_000_000) == "13,000,000")
        #expect(DisplayText.grouped(999) == "999")
        #expect(DisplayText.grouped(-1_000) == "-1,000")
        #expect(DisplayText.grouped(Int64.min) == "-9,223,372,036,854,775,808")
    }

    @Test("control characters and invalid bytes are escaped, ordinary text passes")
    func escapes() {
        #expect(DisplayText.escape(Array("IMG 0001.jpg".utf8)) == "IMG 0001.jpg")
        #expect(DisplayText.escape(Array("a\nb\tc".utf8)) == "a\\nb\\tc")
        #expect(DisplayText.escape([0x1b] + Array("[2J".utf8)) == "\\x1b[2J")
        #expect(DisplayText.escape(Array("caf".utf8) + [0xe9]) == "caf\\xe9")
        #expect(DisplayText.escape(Array("café".utf8)) == "café")
        #expect(DisplayText.escape(Array("evil\u{202e}gpj.exe".utf8)) == "evil\\u{202e}gpj.exe")
        #expect(DisplayText.escape([0xc0, 0x80]) == "\\xc0\\x80", "overlong encodings are not text")
    }

    @Test("a path keeps its bytes and knows its last component")
    func localPath() {
        let p = LocalPath(bytes: Array("/home/me/caf".utf8) + [0xff] + Array(".jpg".utf8))
        #expect(p.lastComponent.bytes == Array("caf".utf8) + [0xff] + Array(".jpg".utf8))
        #expect(p.parent == LocalPath("/home/me"))
        #expect(p.display == "/home/me/caf\\xff.jpg")
        #expect(LocalPath("/a/b/").lastComponent == LocalPath("b"))
    }
}

@Suite("The config file reader")
struct IniFileTests {
    @Test("reads sections, named sections, comments and quoted values")
    func reads() throws {
        let ini = try IniFile(parsing: "# top\n[transfers]\nuploads = 2\n; note\n[watch \"Camera\"]\npath = \"/home/me/DCIM\"\n")
        #expect(ini.sections("transfers").first?.values["uploads"] == "2")
        let watch = try #require(ini.sections("watch").first)
        #expect(watch.name == "Camera")
        #expect(watch.values["path"] == "/home/me/DCIM")
        #expect(watch.lines["path"] == 6)
    }

    @Test("a broken line is named with its number", arguments: [
        ("[transfers\nuploads = 1\n", 1, "must end with `]`"),
        ("[transfers]\nuploads 3\n", 2, "expected `key = value`"),
        ("[transfers]\n= 3\n", 2, "a value without a key"),
    ])
    func errors(text: String, line: Int, message: String) {
        #expect { try IniFile(parsing: text) } throws: { error in
            guard let e = error as? IniFile.ParseError else { return false }
            return e.line == line && e.message.contains(message)
        }
    }
}

@Suite("XDG folders")
struct XDGPathsTests {
    @Test("follows the XDG variables and ignores relative ones")
    func variables() {
        let p = XDGPaths(environment: ["HOME": "/h", "XDG_STATE_HOME": "/s", "XDG_CONFIG_HOME": "relative", "XDG_RUNTIME_DIR": "/run/user/1"])
        #expect(p.queueDatabase == "/s/instant-upload/queue.sqlite3")
        #expect(p.configDirectory == "/h/.config/instant-upload")
        #expect(p.controlSocket == "/run/user/1/instant-upload/agent.sock")
        #expect(p.localDrive == "/h/Downloads/Local Drive")
    }

    @Test("reads the download folder from user-dirs.dirs as xdg-user-dir would")
    func userDirs() {
        #expect(XDGPaths.parseUserDirs("# x\nXDG_DOWNLOAD_DIR=\"$HOME/Téléchargements\"\n", key: "XDG_DOWNLOAD_DIR") == "$HOME/Téléchargements")
        #expect(XDGPaths.parseUserDirs("XDG_DOWNLOAD_DIR=\"relative\"\n", key: "XDG_DOWNLOAD_DIR") == nil)
    }

    @Test("log lines never carry credentials or query strings")
    func redact() {
        #expect(Log.redact(url: "https://me:secret@cloud.example.org/files/abc?token=x") == "https://cloud.example.org/files/abc")
    }
}

@Suite("Private folders and the runtime fallback")
struct PrivateFolderTests {
    static func mode(_ path: String) -> mode_t {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o7777 : 0
    }

    @Test("a log line shows control characters escaped like the queue does, and already escaped text unchanged")
    func logLineEscapes() {
        #expect(DisplayText.escapeControls("a\nb\tc\u{1b}[2J\u{202e}x") == "a\\nb\\tc\\x1b[2J\\u{202e}x")
        #expect(DisplayText.escapeControls(DisplayText.escape("new\nline\\x.jpg")) == DisplayText.escape("new\nline\\x.jpg"))
        #expect(DisplayText.escapeControls("café IMG_0001.jpg") == "café IMG_0001.jpg")
    }

    @Test("the /tmp fallback is one per state folder: two HOMEs differ, two spellings of one folder agree")
    func fallbackPerStateFolder() throws {
        var template = Array("/tmp/iu-xdg-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        let root = String(cString: try #require(made))
        defer { _ = try? FileManager.default.removeItem(atPath: root) }
        for home in ["a", "b"] { try FileManager.default.createDirectory(atPath: root + "/" + home, withIntermediateDirectories: true) }
        let a = XDGPaths(environment: ["HOME": root + "/a"]).runtimeDirectory
        let b = XDGPaths(environment: ["HOME": root + "/b"]).runtimeDirectory
        let aAgain = XDGPaths(environment: ["HOME": root + "/b/../a"]).runtimeDirectory
        #expect(a.hasPrefix("/tmp/instant-upload-\(geteuid())-"))
        #expect(a != b)
        #expect(a == aAgain)
        #expect(XDGPaths(environment: ["HOME": root + "/a", "XDG_STATE_HOME": root + "/b/.local/state"]).runtimeDirectory == b,
                "the state folder decides: one queue, one agent")
        #expect(XDGPaths(environment: ["HOME": "/h", "XDG_RUNTIME_DIR": "/run/user/1"]).runtimeDirectory == "/run/user/1/instant-upload")
    }

    @Test("a folder such as Local Drive is made with its mode, a looser one is tightened to it, and a stricter one keeps its own")
    func folderKeepsItsMode() throws {
        var template = Array("/tmp/iu-folder-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        let root = String(cString: try #require(made))
        defer { _ = try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/Downloads/Local Drive"
        try FileIO.makeDirectory(folder, mode: 0o755)
        #expect(Self.mode(folder) & ~0o755 == 0 && Self.mode(folder) & 0o700 == 0o700, "made with at most 0755: \(String(Self.mode(folder), radix: 8))")

        chmod(folder, 0o777)
        try FileIO.makeDirectory(folder, mode: 0o755)
        #expect(Self.mode(folder) == 0o755, "others' write taken away: \(String(Self.mode(folder), radix: 8))")

        chmod(folder, 0o700)
        try FileIO.makeDirectory(folder, mode: 0o755)
        #expect(Self.mode(folder) == 0o700, "the owner's stricter mode stays: \(String(Self.mode(folder), radix: 8))")
    }

    @Test("a private folder is made 0700 with its parents, tightened when others may read it, refused when they may write")
    func privateFolder() throws {
        var template = Array("/tmp/iu-private-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        let root = String(cString: try #require(made))
        defer { _ = try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/deep/state"
        try PrivateFolder.prepare(folder, role: .state)
        #expect(Self.mode(root + "/deep") == 0o700 && Self.mode(folder) == 0o700)

        chmod(folder, 0o755)
        try PrivateFolder.prepare(folder, role: .state)
        #expect(Self.mode(folder) == 0o700)

        chmod(folder, 0o770)
        #expect(throws: PrivateFolder.Problem.self) { try PrivateFolder.prepare(folder, role: .state) }
        #expect(throws: PrivateFolder.Problem.self) { try PrivateFolder.check(folder, role: .config) }
        #expect(Self.mode(folder) == 0o770, "refused, not silently changed")
        chmod(folder, 0o700)

        try #require(chown(folder, 65534, 65534) == 0, "giving a folder to another user needs root")
        do {
            try PrivateFolder.prepare(folder, role: .state)
            Issue.record("a folder of another user was accepted")
        } catch {
            #expect(error.description.contains("belongs to user nobody (uid 65534), not to you"), "\(error)")
        }
        try PrivateFolder.check(root + "/missing", role: .config) // nothing there: nothing to refuse
    }
}

@Suite("Floating-point values become whole numbers without trapping")
struct SaturatingTests {
    @Test("infinities, NaN and values beyond the type clamp; others round toward zero")
    func saturating() {
        #expect(Int64(saturating: .infinity) == .max)
        #expect(Int64(saturating: -.infinity) == .min)
        #expect(Int64(saturating: .nan) == 0)
        #expect(Int64(saturating: 1e300) == .max)
        #expect(Int64(saturating: 9_223_372_036_854_775_807.0) == .max)
        #expect(Int64(saturating: -9_223_372_036_854_775_808.0) == .min)
        #expect(Int64(saturating: 2.9) == 2 && Int64(saturating: -2.9) == -2)
        #expect(Int32(saturating: 3e9) == .max && Int(saturating: 1e300 * 1000) == .max)
        #expect(UInt8(saturating: -1) == 0)
    }

    /// A guard on the sources, so that a new `Int64(someDouble)` cannot slip in: a conversion to
    /// an integer type whose argument shows floating point (`Double`, `Float`, `.rounded(`,
    /// a time interval, `seconds *`) says how it handles the values that do not fit
    /// (`saturating:`, `exactly:`, ...). A text check: a Double under a neutral name escapes it.
    @Test("no conversion in Sources/ of an evidently floating-point value to an integer is unchecked")
    func noUncheckedConversions() throws {
        let conversion = try NSRegularExpression(pattern: #"\bU?Int(8|16|32|64)?\((?!saturating:|exactly:|bitPattern:|truncatingIfNeeded:|clamping:|ascii:)"#)
        let floating = try NSRegularExpression(pattern: #"Double|Float|\.rounded\(|[Tt]imeInterval|seconds \*"#)
        let sources = Repository.root + "/Sources"
        var found: [String] = []
        let files = FileManager.default.enumerator(atPath: sources)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        #expect(files.count > 50, "the sources were found at \(sources)")
        for file in files {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = String(line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                let utf16 = Array(code.utf16)
                for match in conversion.matches(in: code, range: NSRange(location: 0, length: utf16.count)) {
                    // The converted expression: up to the parenthesis that closes the call.
                    var end = match.range.location + match.range.length, depth = 1
                    while end < utf16.count, depth > 0 {
                        if utf16[end] == 0x28 { depth += 1 } else if utf16[end] == 0x29 { depth -= 1 }
                        end += 1
                    }
                    let argument = NSRange(location: match.range.location, length: end - match.range.location)
                    if floating.firstMatch(in: code, range: argument) != nil {
                        found.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                    }
                }
            }
        }
        #expect(found.isEmpty, "use Int(saturating:) (or exactly:) here:\n\(found.joined(separator: "\n"))")
    }
}

@Suite("The config file reader ends lines where the file does")
struct IniFileLineEndingTests {
    @Test("CRLF line endings and a prepend mark before a line end still end the line")
    func lineEndings() throws {
        let ini = try IniFile(parsing: "[transfers]\r\nuploads = 2\r\n[agent]\r\nautostart = false\r\n")
        #expect(ini.sections("transfers").first?.values["uploads"] == "2")
        #expect(ini.sections("agent").first?.values["autostart"] == "false")
        let prepend = try IniFile(parsing: "[a]\nk = v\u{600}\nj = w\n")
        #expect(prepend.sections("a").first?.values["j"] == "w")
        #expect(prepend.sections("a").first?.lines["j"] == 3)
    }
}
