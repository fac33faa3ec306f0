import Foundation
import Glibc
import TestSupport
import Testing

/// `watch add|list|remove|pause|resume` through the real binary, with no agent running:
/// what they write into the config and the queue, and what they refuse.
@Suite("Watch rules from the command line")
struct WatchCommandTests {
    static let configStart = "# my settings\n[agent]\nautostart = false\n\n# faster for the camera\n[transfers]\nuploads = 2\n"

    func session() throws -> (AgentHarness, ReferenceServer) {
        let server = try ReferenceServer()
        let session = try AgentHarness()
        try session.writeConfig(Self.configStart)
        try session.addAccount(server)
        return (session, server)
    }

    var configPath: (AgentHarness) -> String { { $0.home.path + "/config/instant-upload/config.ini" } }

    func config(_ session: AgentHarness) throws -> String { try String(contentsOfFile: configPath(session), encoding: .utf8) }

    @Test("add writes the rule into the config and keeps every other line; pause, resume and remove edit only that rule")
    func editsTheConfig() throws {
        let (session, _) = try session()
        let camera = session.home.path + "/Pictures/Camera"
        try session.home.file("Pictures/Camera/old.jpg", bytes: [1, 2, 3])
        let add = try session.cli(["watch", "add", camera + "/", "--to", "/Photos/Camera/", "--pictures", "--subfolders", "month",
                                   "--after-upload", "trash", "--wifi-only", "--on-ac-power"])
        #expect(add.status == 0, "\(add.stderr)")
        #expect(add.stdout.contains("as rule camera") && add.stdout.contains("home:/Photos/Camera/YYYY/MM/"), "\(add.stdout)")
        #expect(add.stdout.contains("1 file already there is left alone"), "\(add.stdout)")
        let written = try config(session)
        #expect(written.hasPrefix(Self.configStart))
        #expect(written.contains("""
            [watch "camera"]
            folder = "\(camera)"
            to = "/Photos/Camera"
            account = "home"
            pictures = yes
            videos = no
            subfolders = month
            after_upload = trash
            wifi_only = yes
            on_ac_power = yes
            existing = no
            paused = no
            """), "\(written)")

        #expect(try session.cli(["watch", "pause", "camera"]).status == 0)
        #expect(try config(session).contains("paused = yes"))
        #expect(try session.cli(["watch", "resume", "camera"]).status == 0)
        #expect(try config(session).contains("paused = no"))
        let remove = try session.cli(["watch", "remove", "camera"])
        #expect(remove.status == 0, "\(remove.stderr)")
        #expect(try config(session).trimmingCharacters(in: .newlines) == Self.configStart.trimmingCharacters(in: .newlines))
        #expect(try session.cli(["watch", "list"]).stdout.contains("no folder is watched"))
    }

    @Test("watch list shows each rule's settings and state, and its JSON has every key")
    func lists() throws {
        let (session, _) = try session()
        try session.home.file("Camera/a.jpg", bytes: [1])
        try session.home.file("Camera/b.jpg", bytes: [2])
        #expect(try session.cli(["watch", "add", session.home.path + "/Camera", "--to", "/Photos", "--videos", "--existing"]).status == 0)
        #expect(try session.cli(["watch", "add", session.home.path + "/Scans", "--to", "/Scans", "--name", "scanner"]).status == 0)
        let text = try session.cli(["watch", "list"])
        #expect(text.status == 1, "nothing is watched while no agent runs")
        #expect(text.stdout.contains("camera: \(session.home.path)/Camera -> home:/Photos/"), "\(text.stdout)")
        #expect(text.stdout.contains("videos; files already there uploaded too; originals kept"), "\(text.stdout)")
        #expect(text.stdout.contains("scanner: \(session.home.path)/Scans -> home:/Scans/"), "\(text.stdout)")
        #expect(text.stdout.contains("trouble: the agent is not running"), "\(text.stdout)")

        let json = try session.cli(["watch", "list", "--json"])
        let rules = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rules.map { $0["id"] as? String } == ["camera", "scanner"])
        #expect(Set(rules[0].keys) == ["id", "folder", "to", "account", "pictures", "videos", "subfolders", "after_upload", "wifi_only",
                                       "wifi_only_from", "on_ac_power", "existing", "paused", "state", "troubles", "held", "pending",
                                       "failed", "taken", "baseline", "last_taken", "last_taken_at", "watched_folders", "overflows", "scans",
                                       "kept", "kept_count", "waiting", "waiting_count"])
        #expect(rules[0]["pictures"] as? Bool == false && rules[0]["videos"] as? Bool == true && rules[0]["existing"] as? Bool == true)
        #expect(rules[0]["state"] as? String == "agent_not_running")
        #expect(rules[0]["baseline"] as? Int == 0, "with --existing nothing is set aside")
        #expect(rules[0]["last_taken"] is NSNull)
        #expect(rules[1]["wifi_only"] as? Bool == false && rules[1]["wifi_only_from"] as? String == "account")
    }

    @Test("add refuses what cannot be a rule, and names the problem",
          arguments: [(["FILE", "--to", "/Photos"], 2, "is not a folder"),
                      (["Camera", "--to", "/Photos", "--name", "a b"], 2, "not a rule name"),
                      (["Camera", "--to", "/Photos", "--name", "first"], 1, "there is a rule named first already"),
                      (["Watched", "--to", "/Elsewhere"], 1, "is already watched by the rule first"),
                      (["Camera", "--to", "/../x"], 2, "has `..` in it"),
                      (["Camera", "--to", "/Photos", "--settle", "0"], 2, "--settle"),
                      (["Camera", "--to", "/Photos", "--account", "nobody"], 2, "no account named nobody"),
                      (["Camera", "--to", "/Photos", "--subfolders", "week"], 2, "none, year, month, day")])
    func refusals(arguments: [String], status: Int32, message: String) throws {
        let (session, _) = try session()
        try session.home.file("FILE", bytes: [1])
        #expect(try session.cli(["watch", "add", session.home.path + "/Watched", "--to", "/Photos", "--name", "first"]).status == 0)
        let before = try config(session)
        let path = session.home.path + "/" + arguments[0]
        let r = try session.cli(["watch", "add", path] + arguments.dropFirst())
        #expect(r.status == status, "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(try config(session) == before, "a refused rule changes nothing")
    }

    @Test("a folder watched already, reached through `..` or a symbolic link, or one inside or around it, is refused naming the rule that has it")
    func oneFolderOneRule() throws {
        let (session, _) = try session()
        let camera = session.home.path + "/Pictures/Camera"
        try FileManager.default.createDirectory(atPath: camera + "/Trip", withIntermediateDirectories: true)
        #expect(symlink(camera, session.home.path + "/CamLink") == 0)
        let added = try session.cli(["watch", "add", camera, "--to", "/Photos", "--name", "camera"])
        #expect(added.status == 0, "\(added.stderr)")
        let before = try config(session)
        let resolved = try #require(realpath(camera, nil))
        let real = String(cString: resolved)
        free(resolved)
        #expect(before.contains("folder = \"\(real)\""), "the rule names the folder by its real path: \(before)")
        for (folder, words) in [(camera + "/../Camera", "is already watched by the rule camera"),
                                (session.home.path + "/CamLink", "is already watched by the rule camera"),
                                (session.home.path + "/CamLink/Trip", "which the rule camera watches with everything below it"),
                                (session.home.path + "/Pictures", "which the rule camera watches already")] {
            let r = try session.cli(["watch", "add", folder, "--to", "/Elsewhere"])
            #expect(r.status == 1, "\(folder): \(r.stdout) \(r.stderr)")
            #expect(r.stderr.contains(words), "\(folder): \(r.stderr)")
        }
        #expect(try config(session) == before, "a refused rule changes nothing")
    }

    @Test("remove, pause and resume of a rule that does not exist exit 1 naming it")
    func unknownRule() throws {
        let (session, _) = try session()
        for command in ["remove", "pause", "resume"] {
            let r = try session.cli(["watch", command, "nope"])
            #expect(r.status == 1)
            #expect(r.stderr.contains("no watch rule named nope"), "\(r.stderr)")
        }
    }
}
