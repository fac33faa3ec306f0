import CLI
import Platform
import Testing

@Suite("Argument parser")
struct ArgumentParserTests {
    @Test("an unknown flag is named in the error, with exit status 2")
    func unknownFlag() {
        let error = usageError("upload", "--frobnicate", "--to", "/Photos", "a.jpg")
        #expect(error?.code == .unknownOption)
        #expect(error?.message == "unknown flag `--frobnicate`")
        #expect(error?.commandPath == ["instant-upload", "upload"])
        #expect(UsageError.exitStatus == 2)
    }

    @Test("a near miss of a flag suggests the real one")
    func typoSuggestion() {
        #expect(usageError("upload", "--acount", "a", "--to", "/P", "f")?.message
                == "unknown flag `--acount`; did you mean `--account`?")
        #expect(usageError("queue", "-x")?.message == "unknown flag `-x`")
    }

    @Test("an option at the end of the line is missing its value")
    func missingValueAtEnd() {
        let error = usageError("upload", "a.jpg", "--to")
        #expect(error?.code == .missingValue)
        #expect(error?.message == "missing value for `--to`")
    }

    @Test("an option followed by another option is missing its value, not given it")
    func missingValueBeforeOption() {
        #expect(usageError("upload", "--to", "--now", "a.jpg")?.message == "missing value for `--to`")
        #expect(usageError("upload", "--to", "-a", "alice", "a.jpg")?.message == "missing value for `--to`")
    }

    @Test("a value that starts with dashes can still be given with =")
    func dashedValueWithEquals() throws {
        let arguments = try parsed(["upload", "--to=--now", "a.jpg"])
        #expect(arguments.value("to") == "--now")
        #expect(!arguments.has("now"))
    }

    @Test("no files is `missing FILE`")
    func missingFile() {
        let error = usageError("upload", "--to", "/Photos")
        #expect(error?.code == .missingArgument)
        #expect(error?.message == "missing FILE")
    }

    @Test("a required option that is absent is named with its placeholder")
    func missingRequiredOption() {
        #expect(usageError("upload", "a.jpg")?.message == "missing --to REMOTE_DIR")
    }

    @Test("one word too many is an unexpected extra argument")
    func extraArgument() {
        let error = usageError("show", "3", "4")
        #expect(error?.code == .unexpectedArgument)
        #expect(error?.message == "unexpected extra argument `4`")
        #expect(usageError("status", "now")?.message == "unexpected extra argument `now`")
    }

    @Test("an ID that is not a number says a number was expected")
    func numberExpected() {
        let error = usageError("show", "abc")
        #expect(error?.code == .invalidValue)
        #expect(error?.message == "a number expected for ID, got `abc`")
        #expect(usageError("cancel", "1", "2x")?.message == "a number expected for ID, got `2x`")
        #expect(usageError("retry", "-5")?.message == "unknown flag `-5`")
    }

    @Test("a word outside a fixed list names the list")
    func choices() {
        #expect(usageError("queue", "--state", "done")?.message
                == "`--state` must be one of queued, in_progress, retrying, completed, failed, got `done`")
        #expect(usageError("clear", "everything")?.message == "WHICH must be one of completed, failed, all, got `everything`")
        #expect(usageError("clear")?.message == "missing WHICH")
    }

    @Test("an option given twice is refused unless it may repeat")
    func repeatedOption() {
        #expect(usageError("upload", "--to", "/a", "--to", "/b", "f")?.message == "`--to` given twice")
        #expect(usageError("status", "--json", "--json")?.message == "`--json` given twice")
    }

    @Test("a flag given a value is refused")
    func flagWithValue() {
        #expect(usageError("upload", "--now=yes", "--to", "/P", "f")?.message == "`--now` takes no value")
    }

    @Test("--opt=value and --opt value read the same")
    func equalsForm() throws {
        let a = try parsed(["upload", "--to=/Photos/2026", "--account=alice", "a.jpg"])
        let b = try parsed(["upload", "--to", "/Photos/2026", "--account", "alice", "a.jpg"])
        #expect(a == b)
        #expect(a.value("to") == "/Photos/2026")
        #expect(a.value("account") == "alice")
    }

    @Test("an = inside the value is kept")
    func equalsInsideValue() throws {
        #expect(try parsed(["upload", "--to=/a=b", "f"]).value("to") == "/a=b")
    }

    @Test("options may come after and between the files")
    func interleaved() throws {
        let arguments = try parsed(["upload", "a.jpg", "--to", "/P", "b.jpg", "--now", "c.jpg"])
        #expect(arguments.texts("FILE") == ["a.jpg", "b.jpg", "c.jpg"])
        #expect(arguments.has("now"))
    }

    @Test("-- ends options, so files named like flags can be uploaded")
    func doubleDash() throws {
        let arguments = try parsed(["upload", "--to", "/P", "--", "-x", "--now", "--help", "--"])
        #expect(arguments.texts("FILE") == ["-x", "--now", "--help", "--"])
        #expect(arguments.flags.isEmpty)
    }

    @Test("a lone dash is a file name, not an option")
    func loneDash() throws {
        #expect(try parsed(["upload", "--to", "/P", "-"]).texts("FILE") == ["-"])
    }

    @Test("short options take values and bundle")
    func shortOptions() throws {
        let upload = try parsed(["upload", "-t", "/P", "-aalice", "f"])
        #expect(upload.value("to") == "/P")
        #expect(upload.value("account") == "alice")
        let queue = try parsed(["queue", "-fs", "failed"])
        #expect(queue.has("follow"))
        #expect(queue.value("state") == "failed")
    }

    @Test("file names that are not UTF-8 come through byte for byte")
    func rawBytes() throws {
        let name: [UInt8] = [0x2f, 0x74, 0x6d, 0x70, 0x2f, 0x66, 0xff, 0xfe, 0x0a, 0x1b, 0x2e, 0x6a, 0x70, 0x67]
        let words = [Argument("upload"), Argument("--to"), Argument("/P"), Argument(bytes: name)]
        guard case .run(let arguments) = try ArgumentParser.parse(words, as: CommandSpecs.instantUpload) else {
            Issue.record("expected arguments"); return
        }
        #expect(arguments.positional("FILE").map(\.bytes) == [name])
        #expect(arguments.paths("FILE") == [LocalPath(bytes: name)])
        #expect(arguments.texts("FILE")[0].contains("\u{FFFD}"))
    }

    @Test("bad bytes in a refused argument are escaped in the message")
    func escapedInErrors() throws {
        let words = [Argument("show"), Argument(bytes: [0x31, 0xff, 0x1b, 0x0a])]
        #expect(throws: UsageError.self) { try ArgumentParser.parse(words, as: CommandSpecs.instantUpload) }
        do {
            _ = try ArgumentParser.parse(words, as: CommandSpecs.instantUpload)
        } catch {
            #expect(error.message == "a number expected for ID, got `1\\xff\\x1b\\n`")
            #expect(!error.report.contains("\u{1b}"))
        }
    }

    @Test("--help anywhere gives that command's help, even on a line that is otherwise wrong")
    func helpAnywhere() throws {
        for line in [["upload", "--help"], ["upload", "--to", "/P", "-h"], ["upload", "--frobnicate", "--help"],
                     ["upload", "-h", "--to"], ["--help", "upload"]] {
            guard case .help(let help) = try ArgumentParser.parse(line, as: CommandSpecs.instantUpload) else {
                Issue.record("no help for \(line)"); continue
            }
            #expect(help.commandPath == ["instant-upload", "upload"], "\(line)")
            #expect(help.text.hasPrefix("usage: instant-upload upload [--account A] --to REMOTE_DIR [--now] FILE..."))
        }
    }

    @Test("--help names the deepest subcommand reached")
    func helpForSubcommands() throws {
        guard case .help(let help) = try parse("account", "add", "--help") else { Issue.record("no help"); return }
        #expect(help.commandPath == ["instant-upload", "account", "add"])
        guard case .help(let root) = try parse("-h") else { Issue.record("no help"); return }
        #expect(root.commandPath == ["instant-upload"])
        guard case .help(let service) = try parse("service", "--help") else { Issue.record("no help"); return }
        #expect(service.text.contains("uninstall"))
    }

    @Test("--help after -- is a file name")
    func helpAfterDoubleDash() throws {
        #expect(try parsed(["upload", "--to", "/P", "--", "--help"]).texts("FILE") == ["--help"])
    }

    @Test("an unknown command is named, with a suggestion")
    func unknownCommand() {
        #expect(usageError("frobnicate")?.message == "unknown command `frobnicate`")
        #expect(usageError("uplaod")?.message == "unknown command `uplaod`; did you mean `upload`?")
        #expect(usageError("account", "delete", "x")?.code == .unknownCommand)
    }

    @Test("a command with subcommands needs one")
    func missingSubcommand() {
        #expect(usageError()?.message == "missing command: one of upload, queue, status, show, retry, pause, resume, cancel, clear, account, watch, download, run, stop, tray, service, help, version")
        #expect(usageError("service")?.message == "missing command: one of install, uninstall, status")
        #expect(usageError("service")?.usage == "usage: instant-upload service install|uninstall|status")
    }

    @Test("retry takes IDs or --all-failed, not both and not neither")
    func retryForms() throws {
        #expect(try parsed(["retry", "3", "4", "--to", "/New", "--now"]).numbers("ID") == [3, 4])
        #expect(try parsed(["retry", "--all-failed"]).has("all-failed"))
        #expect(usageError("retry")?.message == "missing ID, or --all-failed")
        #expect(usageError("retry", "3", "--all-failed")?.message
                == "ID and --all-failed do not go together: give ID, or --all-failed")
        #expect(usageError("retry", "--all-failed", "--to", "/x")?.message == "`--all-failed` and `--to` do not go together")
    }

    @Test("account add takes one URL (with --user, --login or neither), or both --webdav and --tus")
    func accountAddForms() throws {
        let short = try parsed(["account", "add", "https://cloud.example.org", "--user", "alice"])
        #expect(short.commandPath == ["instant-upload", "account", "add"])
        #expect(short.text("URL") == "https://cloud.example.org")
        let long = try parsed(["account", "add", "--webdav", "https://c/dav/", "--tus", "https://c/files/", "--user", "alice",
                               "--name", "home", "--password-stdin"])
        #expect(long.value("webdav") == "https://c/dav/")
        #expect(long.value("name") == "home")
        #expect(long.has("password-stdin"))
        #expect(usageError("account", "add", "--webdav", "https://c/dav/", "--user", "a")?.message == "--webdav also needs --tus")
        #expect(usageError("account", "add", "--user", "a")?.message == "missing URL, or --webdav and --tus")
        #expect(usageError("account", "add", "https://c", "--tus", "https://c/files/", "--user", "a")?.code == .conflict)
        // Without --user a browser login is the way in; --login asks for it outright.
        let login = try parsed(["account", "add", "https://cloud.example.org", "--login"])
        #expect(login.has("login") && login.value("user") == nil)
        #expect(try parsed(["account", "add", "https://cloud.example.org"]).value("user") == nil)
        #expect(usageError("account", "add", "https://c", "--login", "--password-stdin")?.code == .conflict)
    }

    @Test("the usage error report has the message, the usage, and where to read more")
    func report() {
        let error = usageError("show")!
        #expect(error.report == """
            instant-upload: missing ID
            usage: instant-upload show [--json] ID
            run `instant-upload show --help` for more
            """)
    }
}

@Suite("Arguments")
struct ArgumentTests {
    @Test("the process's own arguments are read from argv without the program name")
    func commandLine() {
        #expect(Argument.commandLine().map(\.text) == Array(CommandLine.arguments.dropFirst()))
    }

    @Test("an argument shows bad bytes escaped and gives them back unchanged as a path")
    func views() {
        let argument = Argument(bytes: [0x61, 0xff, 0x0a])
        #expect(argument.display == "a\\xff\\n")
        #expect(argument.text == "a\u{FFFD}\n")
        #expect(argument.path.bytes == [0x61, 0xff, 0x0a])
    }
}
