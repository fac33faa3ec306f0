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
}
