import CLI
import Foundation
import TestSupport
import Testing

/// The shell completions in packaging/completions follow the command specs: a command or an
/// option added to the CLI shows up in bash, zsh and fish.
@Suite("Shell completions")
struct CompletionTests {
    /// How a file of this shell spells a long option.
    static func spelled(_ long: String, in file: String) -> String { file.hasSuffix(".fish") ? "-l " + long : "--" + long }

    static func read(_ name: String) throws -> String {
        try String(contentsOfFile: Repository.root + "/packaging/completions/" + name, encoding: .utf8)
    }

    @Test("every instant-upload command and each of its options is completed by bash, zsh and fish")
    func instantUpload() throws {
        for file in ["instant-upload.bash", "_instant-upload", "instant-upload.fish"] {
            let text = try Self.read(file)
            for command in CommandSpecs.instantUpload.subcommands {
                #expect(text.contains(command.name), "\(file) does not complete `\(command.name)`")
                for sub in command.subcommands { #expect(text.contains(sub.name), "\(file) does not complete `\(command.name) \(sub.name)`") }
                for option in command.options + command.subcommands.flatMap(\.options) {
                    #expect(text.contains(Self.spelled(option.long, in: file)), "\(file) does not complete `\(command.name) --\(option.long)`")
                }
            }
        }
    }

    @Test("share-to's options are completed by bash, zsh and fish, and file names after them")
    func shareTo() throws {
        for file in ["share-to.bash", "_share-to", "share-to.fish"] {
            let text = try Self.read(file)
            for option in CommandSpecs.shareTo.options { #expect(text.contains(Self.spelled(option.long, in: file)), "\(file) lacks --\(option.long)") }
            #expect(text.contains("_filedir") || text.contains("_files") || text.contains("-F"), "\(file) does not complete file names")
        }
    }

    /// What bash completes for `line` (the word being completed last, "" for a new word), with
    /// or without the bash-completion package loaded first.
    static func completions(_ line: [String], package: Bool, session: AgentHarness) throws -> [String] {
        let library = "/usr/share/bash-completion/bash_completion"
        if package, !FileManager.default.fileExists(atPath: library) {
            throw TestFailure("\(library) is missing: install the bash-completion package (make test installs it)")
        }
        let quoted = line.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let script = (package ? "source \(library)\n" : "declare -F _init_completion _filedir && exit 9\n") + """
            source \(Repository.root)/packaging/completions/\(line[0]).bash
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(line.count - 1)
            COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
            _\(line[0].replacingOccurrences(of: "-", with: "_"))
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        var environment = session.environment
        environment["PATH"] = Repository.binaries + ":/usr/bin:/bin"
        let r = try Shell.capture("/bin/bash", ["--norc", "--noprofile", "-c", script], environment: environment)
        guard r.status == 0 else { throw TestFailure("bash exited \(r.status): \(r.stdout) \(r.stderr)") }
        #expect(!r.stderr.contains("command not found"), "\(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init).sorted()
    }

    @Test("bash completes commands, account names, rule names and item numbers, with the bash-completion package and without it", arguments: [false, true])
    func bashWords(package: Bool) throws {
        let server = try ReferenceServer()
        try server.makeFolder("Photos")
        let session = try AgentHarness()
        try session.addAccount(server, name: "home")
        try session.addAccount(server, name: "holiday cloud")
        let camera = session.home.path + "/Camera"
        try FileManager.default.createDirectory(atPath: camera, withIntermediateDirectories: true)
        let added = try session.cli(["watch", "add", camera, "--to", "/Photos", "--account", "home", "--name", "camera"])
        try #require(added.status == 0, "\(added.stderr)")
        let file = try session.home.file("a.txt", bytes: Array("a".utf8))
        try #require(try session.cli(["upload", "--to", "/Photos", "--account", "home", file]).status == 0)
        let id = try #require(try session.items().first?["id"] as? Int)

        #expect(try Self.completions(["instant-upload", "sta"], package: package, session: session) == ["status"])
        #expect(try Self.completions(["instant-upload", "st"], package: package, session: session) == ["status", "stop"])
        #expect(try Self.completions(["instant-upload", "upload", "--account", ""], package: package, session: session) == ["holiday cloud", "home"])
        #expect(try Self.completions(["instant-upload", "watch", "pause", ""], package: package, session: session) == ["camera"])
        #expect(try Self.completions(["instant-upload", "pause", ""], package: package, session: session) == ["\(id)"])
        #expect(try Self.completions(["instant-upload", "retry", ""], package: package, session: session) == [], "nothing failed")
        #expect(try Self.completions(["share-to", "--account", "ho"], package: package, session: session) == ["holiday cloud", "home"])
    }
}
