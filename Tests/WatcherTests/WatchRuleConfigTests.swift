import Platform
import Testing
@testable import Watcher

@Suite("Watch rules in the config")
struct WatchRuleConfigTests {
    static let example = """
    # my settings
    [transfers]
    uploads = 2

    [watch "camera"]
    folder = "/home/me/Pictures/Camera"
    to = /Photos/Camera/
    account = home
    videos = yes
    subfolders = month
    after_upload = trash
    wifi_only = yes
    on_ac_power = true
    settle_seconds = 5

    # the scanner
    [watch "scans"]
    folder = /home/me/Scans
    to = "/Documents/Scans"
    paused = on
    """

    @Test("reads every setting of a rule, with the defaults for the rest")
    func reads() throws {
        let rules = try WatchRule.rules(inConfig: Self.example)
        #expect(rules.map(\.id) == ["camera", "scans"])
        let camera = rules[0]
        #expect(camera.folder == LocalPath("/home/me/Pictures/Camera"))
        #expect(camera.remoteFolder == "/Photos/Camera")
        #expect(camera.account == "home")
        #expect(camera.media == MediaSelection(pictures: false, videos: true))
        #expect(camera.subfolders == .month)
        #expect(camera.afterUpload == .trash)
        #expect(camera.wifiOnly == true && camera.onACPower && !camera.existing && !camera.paused)
        #expect(camera.settleSeconds == 5)
        #expect(camera.watcherSettings.settleWindow == .seconds(5))
        let scans = rules[1]
        #expect(scans.media == .all)
        #expect(scans.subfolders == WatchRule.DateSubfolders.none)
        #expect(scans.afterUpload == .keep)
        #expect(scans.paused)
        #expect(scans.account == nil)
        #expect(scans.wifiOnly == nil, "without wifi_only a rule follows its account's flag")
        #expect(scans.settleSeconds == 3)
    }

    @Test("a rule that cannot be used names its line", arguments: [
        ("[watch \"a\"]\nfolder = /x\n", 1, "needs `to"),
        ("[watch \"a\"]\nto = /x\n", 1, "needs `folder"),
        ("[watch \"a\"]\nfolder = relative/path\nto = /x\n", 2, "absolute"),
        ("[watch \"a\"]\nfolder = /x\nto = /x\nsubfolders = week\n", 4, "none, year, month, day"),
        ("[watch \"a\"]\nfolder = /x\nto = /x\nwifi_only = maybe\n", 4, "true or false"),
        ("[watch \"a\"]\nfolder = /x\nto = /x\nsettle_seconds = 0\n", 4, "from 1 to 600"),
        ("[watch \"a\"]\nfolder = /x\nto = /x\nfolders = /y\n", 4, "unknown setting `folders`"),
        ("[watch \"a\"]\nfolder = /x\nto = /../etc\n", 3, "climb out"),
        ("[watch]\nfolder = /x\nto = /x\n", 1, "needs a name"),
        ("[watch \"a b\"]\nfolder = /x\nto = /x\n", 1, "not a rule name"),
        ("[watch \"a\"]\nfolder = /x\nto = /x\n\n[watch \"a\"]\nfolder = /y\nto = /y\n", 5, "a second [watch \"a\"]"),
        ("[watch \"a\"]\nfolder = \"/x\\x4\"\nto = /x\n", 2, "two hex digits"),
    ])
    func problems(text: String, line: Int, message: String) {
        #expect { try WatchRule.rules(inConfig: text) } throws: { error in
            guard let problem = error as? WatchRule.ConfigProblem else { return false }
            return problem.line == line && problem.message.contains(message)
        }
    }

    @Test("a rule written and read back is the same rule, whatever its folder is called")
    func roundTrip() throws {
        let odd = LocalPath(bytes: Array("/home/me/Ph\"otos \\ ".utf8) + [0xFF, 0x0A] + Array("Caméra".utf8))
        let rule = WatchRule(id: "odd-1", folder: odd, remoteFolder: "/Fotos/Mes \"photos\"", account: "work account",
                             media: MediaSelection(pictures: true, videos: false), wifiOnly: true, existing: true,
                             subfolders: .day, afterUpload: .trash, onACPower: true, paused: true, settleSeconds: 10)
        let text = try rule.writing(into: "")
        #expect(try WatchRule.rules(inConfig: text) == [rule])
        #expect(text.contains("folder = \"/home/me/Ph\\\"otos \\\\ \\xff\\x0aCaméra\""))
    }

    @Test("a rule that leaves Wi-Fi to its account writes no wifi_only line, and reads back the same")
    func wifiDefault() throws {
        let rule = WatchRule(id: "cam", folder: LocalPath("/c"), remoteFolder: "/C")
        let text = try rule.writing(into: "")
        #expect(!text.contains("wifi_only"))
        #expect(try WatchRule.rules(inConfig: text).first?.wifiOnly == nil)
        var off = rule
        off.wifiOnly = false
        #expect(try WatchRule.rules(inConfig: try off.writing(into: "")).first?.wifiOnly == false)
    }

    @Test("adding, changing and removing a rule keeps every other line of the file")
    func editing() throws {
        var rule = try #require(WatchRule.rules(inConfig: Self.example).first)
        rule.paused = true
        let changed = try rule.writing(into: Self.example)
        #expect(changed.hasPrefix("# my settings\n[transfers]\nuploads = 2\n\n[watch \"camera\"]\n"))
        #expect(changed.contains("# the scanner\n[watch \"scans\"]\nfolder = /home/me/Scans\n"))
        #expect(try WatchRule.rules(inConfig: changed).map(\.paused) == [true, true])

        let added = try WatchRule(id: "phone", folder: LocalPath("/media/phone/DCIM"), remoteFolder: "/Phone").writing(into: changed)
        #expect(try WatchRule.rules(inConfig: added).map(\.id) == ["camera", "scans", "phone"])
        #expect(added.hasPrefix(changed.trimmingCharacters(in: .newlines)))

        let removed = try WatchRule.removing("camera", from: added)
        #expect(try WatchRule.rules(inConfig: removed).map(\.id) == ["scans", "phone"])
        #expect(removed.contains("# my settings\n[transfers]\nuploads = 2\n"))
        #expect(removed.contains("# the scanner\n"))
        #expect(try WatchRule.removing("nope", from: removed) == removed)
    }

    @Test("IDs for new rules come from the folder's name and never collide")
    func ids() {
        #expect(WatchRule.makeID(for: LocalPath("/home/me/Camera"), avoiding: []) == "camera")
        #expect(WatchRule.makeID(for: LocalPath("/home/me/Camera"), avoiding: ["camera", "camera-2"]) == "camera-3")
        #expect(WatchRule.makeID(for: LocalPath("/media/card/DCIM 100 (x)"), avoiding: []) == "dcim-100-x")
        #expect(WatchRule.makeID(for: LocalPath("/home/me/Фото"), avoiding: []) == "watch")
        #expect(WatchRule.isValidID("camera-2") && !WatchRule.isValidID("a b") && !WatchRule.isValidID(".hidden"))
    }
}

@Suite("The config file reader's typed values")
struct IniValueTests {
    @Test("quoted values carry escapes as bytes; the text between quotes stays as it was")
    func escapes() throws {
        let ini = try IniFile(parsing: "[s]\na = \"x\\x41\\\\\\\"y\"\nb = C:\\x41\nc = \"\\q\"\n")
        let s = try #require(ini.sections("s").first)
        #expect(try s.bytes("a") == Array("xA\\\"y".utf8))
        #expect(s.values["a"] == "x\\x41\\\\\\\"y", "values keep what was between the quotes")
        #expect(try s.bytes("b") == Array("C:\\x41".utf8), "unquoted values are taken as written")
        #expect(try s.bytes("c") == Array("\\q".utf8), "an unknown escape keeps its backslash")
        #expect(s.headerLine == 1 && s.lastLine == 4)
    }

    @Test("any bytes survive quoting")
    func quoting() throws {
        for bytes: [UInt8] in [[], Array("plain".utf8), [0, 1, 0x22, 0x5C, 0x7F, 0x80, 0xFF], Array("é\"\\".utf8)] {
            let ini = try IniFile(parsing: "[s]\nv = \(IniFile.quoted(bytes))\n")
            #expect(try ini.sections("s").first?.bytes("v") == bytes)
        }
    }
}
