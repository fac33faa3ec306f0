import Engine
import Foundation
import Platform
import Queue

/// `share-to FILE...`: the desktop "Send to" handler. Queues the files for the chosen folder
/// and returns; the agent does the rest.
enum ShareTo {
    static func run(_ p: ParsedArguments, context: CommandContext) throws -> Int32 {
        guard let folder = p.value("to") ?? askForFolder(context: context) else {
            context.complain("choose the folder on the server with --to DIR")
            return ExitStatus.usage
        }
        return try TransferCommands.upload(files: p.paths("FILE"), to: folder, accountName: p.value("account"), now: false,
                                           origin: .share, context: context)
    }

    /// Without `--to`, on a desktop: a small dialog asks for the folder (zenity).
    static func askForFolder(context: CommandContext) -> String? {
        let env = context.paths.environment
        guard env["DISPLAY"] != nil || env["WAYLAND_DISPLAY"] != nil, FileIO.exists("/usr/bin/zenity") else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/zenity")
        process.arguments = ["--entry", "--title=Send to your server", "--text=Folder on the server:", "--entry-text=/"]
        let out = Pipe()
        process.standardOutput = out
        do { try process.run() } catch { return nil }
        let answer = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        process.waitUntilExit()
        return process.terminationStatus == 0 && !answer.isEmpty ? answer : nil
    }
}
