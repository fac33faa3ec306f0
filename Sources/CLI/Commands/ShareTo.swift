import Engine
import Foundation
import Platform
import Queue

/// `share-to FILE...`: the desktop "Send to" handler. Queues the files for the chosen folder
/// and returns; the agent does the rest.
enum ShareTo {
    static func run(_ p: ParsedArguments, context: CommandContext) throws -> Int32 {
        guard let folder = p.value("to") else {
            context.complain("choose the folder on the server with --to DIR (the folder picker comes with the desktop integration)")
            return ExitStatus.usage
        }
        return try TransferCommands.upload(files: p.paths("FILE"), to: folder, accountName: p.value("account"), now: false,
                                           origin: .share, context: context)
    }
}
