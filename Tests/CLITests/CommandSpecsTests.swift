import CLI
import Testing

@Suite("Command specs")
struct CommandSpecsTests {
    /// Every form of every command, as the design lists them.
    static let validLines: [[String]] = [
        ["upload", "--account", "alice", "--to", "/Photos", "--now", "a.jpg", "b.jpg"],
        ["upload", "--to", "/Photos", "a.jpg"],
        ["queue"], ["queue", "--state", "failed", "--json", "--follow"],
        ["status"], ["status", "--json"],
        ["show", "17"], ["show", "17", "--json"],
        ["retry", "17", "18", "--to", "/New", "--now"], ["retry", "--all-failed"],
        ["cancel", "17", "18"],
        ["clear", "completed"], ["clear", "failed"], ["clear", "all"],
        ["account", "add", "--webdav", "https://c/dav/a/", "--tus", "https://c/files/", "--user", "a", "--name", "home", "--password-stdin"],
        ["account", "add", "https://c", "--user", "a"],
        ["account", "list"], ["account", "list", "--json"], ["account", "remove", "home"],
        ["download", "--account", "alice", "/Documents/report.pdf", "/Documents/b.pdf"],
        ["watch", "add", "/home/me/Camera", "--to", "/Photos/Camera", "--account", "home", "--pictures", "--videos", "--wifi-only",
         "--existing", "--subfolders", "month", "--after-upload", "trash", "--on-ac-power", "--name", "camera", "--settle", "5"],
        ["watch", "add", "Camera", "--to", "/Photos"],
        ["watch", "list"], ["watch", "list", "--json"], ["watch", "remove", "camera"], ["watch", "pause", "camera"], ["watch", "resume", "camera"],
        ["run"],
        ["service", "install"], ["service", "uninstall"], ["service", "status"],
    ]

    @Test("every command form from the design parses", arguments: validLines)
    func parses(_ line: [String]) throws {
        let arguments = try parsed(line)
        #expect(arguments.commandPath.dropFirst().allSatisfy { line.contains($0) })
    }

    @Test("share-to takes files, a folder and an account")
    func shareTo() throws {
        let arguments = try parsed(["--to", "/Photos", "--account", "alice", "a.jpg", "b.jpg"], as: CommandSpecs.shareTo)
        #expect(arguments.commandPath == ["share-to"])
        #expect(arguments.value("to") == "/Photos")
        #expect(arguments.texts("FILE_OR_URI") == ["a.jpg", "b.jpg"])
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["--to", "/Photos"], as: CommandSpecs.shareTo) }
    }

    @Test("the root help lists every command with its summary")
    func rootHelp() {
        let text = CommandSpecs.instantUpload.helpText(commandPath: ["instant-upload"])
        for command in CommandSpecs.instantUpload.subcommands {
            #expect(text.contains("  \(command.name) "), "\(command.name) missing from help")
        }
        #expect(text.hasPrefix("usage: instant-upload COMMAND"))
        #expect(text.contains("Run `instant-upload COMMAND --help`"))
    }

    @Test("a command's help has its usage, summary, arguments and options")
    func uploadHelp() {
        let text = CommandSpecs.upload.helpText(commandPath: ["instant-upload", "upload"])
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "usage: instant-upload upload [--account A] --to REMOTE_DIR [--now] FILE...")
        #expect(lines[2] == CommandSpecs.upload.summary)
        #expect(lines.contains { $0.hasPrefix("  -a, --account A") })
        #expect(lines.contains { $0.hasPrefix("  -t, --to REMOTE_DIR") && $0.contains("(required)") })
        #expect(lines.contains { $0.hasPrefix("      --now") })
        #expect(lines.contains { $0.hasPrefix("  -h, --help") })
        #expect(lines.contains { $0.hasPrefix("  FILE...") })
        #expect(lines.allSatisfy { $0.count <= 80 }, "a help line is wider than 80 columns")
    }

    @Test("a command with two forms shows both usage lines")
    func twoForms() {
        let usage = CommandSpecs.accountAdd.usageText(commandPath: ["instant-upload", "account", "add"])
        #expect(usage == """
            usage: instant-upload account add URL [--user NAME [--password-stdin] | --login] [--name ALIAS] [--wifi-only] [--ca-file PATH] [--allow-insecure-http]
               or: instant-upload account add --webdav URL --tus URL --user NAME [--name ALIAS] [--password-stdin] [--wifi-only] [--ca-file PATH] [--allow-insecure-http]
            """)
    }

    @Test("help for every command fits 80 columns except for usage lines")
    func helpWidths() {
        func visit(_ spec: CommandSpec, _ path: [String]) {
            let text = spec.helpText(commandPath: path)
            for line in text.split(separator: "\n") where !line.hasPrefix("usage:") && !line.hasPrefix("   or:") {
                #expect(line.count <= 80, "\(path.joined(separator: " ")): \(line)")
            }
            for sub in spec.subcommands { visit(sub, path + [sub.name]) }
        }
        visit(CommandSpecs.instantUpload, ["instant-upload"])
        visit(CommandSpecs.shareTo, ["share-to"])
    }

    @Test("every usage line set out by hand still names every option of its command")
    func usageListsEveryOption() {
        func visit(_ spec: CommandSpec, _ path: [String]) {
            let usage = spec.usageLines(commandPath: path).joined(separator: "\n")
            for option in spec.options where option.long != "version" {
                #expect(usage.contains(option.dashed), "\(path.joined(separator: " ")): usage lacks \(option.dashed)")
            }
            for sub in spec.subcommands { visit(sub, path + [sub.name]) }
        }
        visit(CommandSpecs.instantUpload, ["instant-upload"])
        visit(CommandSpecs.shareTo, ["share-to"])
    }

    @Test("--version needs no command and no files; `version` and `help COMMAND` are commands")
    func versionAndHelp() throws {
        #expect(try parsed(["--version"]).has("version"))
        #expect(try parsed(["--version"], as: CommandSpecs.shareTo).has("version"))
        #expect(try parsed(["version"]).command == "version")
        #expect(try parsed(["help", "account", "add"]).texts("COMMAND") == ["account", "add"])
        #expect(try parsed(["help"]).command == "help")
    }
}
