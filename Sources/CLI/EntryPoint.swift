import Engine
import Glibc
import Platform
import Queue
import Transport
import Watcher

/// The `instant-upload` and `share-to` executables: parse, dispatch, map errors to words and
/// exit statuses.
public enum Main {
    public static func instantUpload(_ arguments: [Argument], context: CommandContext = CommandContext()) -> Int32 {
        run(arguments, spec: CommandSpecs.instantUpload, context: context)
    }

    public static func shareTo(_ arguments: [Argument], context: CommandContext = CommandContext()) -> Int32 {
        run(arguments, spec: CommandSpecs.shareTo, context: context)
    }

    /// Ends the process once a command has returned: what it wrote to standard output and
    /// error is flushed, and the process ends without the libraries' clean-up (`_exit`).
    /// Every command has done its own by then (the queue's connections closed, the agent's
    /// outcomes recorded); the libraries' destructors and exit handlers (thirty of them,
    /// most brought in by libcurl and libdbus) only free memory the kernel takes back
    /// anyway, and running them paged each one's clean-up code in as the agent ended,
    /// 0.5 MB above its peak while it worked.
    public static func exit(_ status: Int32) -> Never {
        fflush(nil)
        _exit(status)
    }

    static func run(_ arguments: [Argument], spec: CommandSpec, context: CommandContext) -> Int32 {
        OpenSSLSetUp.withoutErrorTexts()
        let parsed: ParsedArguments
        do {
            switch try ArgumentParser.parse(arguments, as: spec) {
            case .help(let help):
                context.say(help.text)
                return ExitStatus.ok
            case .run(let p):
                parsed = p
            }
        } catch {
            context.complain(error.report)
            return UsageError.exitStatus
        }
        do {
            return try dispatch(parsed, context: context)
        } catch let e as QueueError {
            context.complain(e.description)
            return ExitStatus.environment
        } catch let e as DatabaseError where e.isCorrupt {
            context.complain(QueueError.damaged(path: e.path, underlying: e).description)
            return ExitStatus.environment
        } catch let e as DatabaseError where e.isBusy {
            context.complain(QueueError.busy(path: e.path, underlying: e).description)
            return ExitStatus.environment
        } catch let e as Configuration.Problem {
            context.complain(e.description)
            return ExitStatus.environment
        } catch {
            context.complain("\(error)")
            return ExitStatus.environment
        }
    }

    static func dispatch(_ p: ParsedArguments, context: CommandContext) throws -> Int32 {
        if p.has("version") || p.command == "version" {
            context.say("\(p.commandPath.first ?? "instant-upload") \(Version.number)")
            return ExitStatus.ok
        }
        if p.commandPath.first == "share-to" {
            return try ShareTo.run(p, context: context)
        }
        switch p.command {
        case "upload":
            return try TransferCommands.upload(files: p.paths("FILE"), to: p.value("to") ?? "/", accountName: p.value("account"),
                                               now: p.has("now"), origin: .manual, context: context)
        case "download":
            return try TransferCommands.download(paths: p.texts("REMOTE_PATH"), accountName: p.value("account"),
                                                 track: p.has("no-track") ? false : nil, context: context)
        case "status":
            return try QueueCommands.status(json: p.has("json"), context: context)
        case "queue":
            return try QueueCommands.queue(state: p.value("state").flatMap(TransferState.init(rawValue:)), json: p.has("json"),
                                           follow: p.has("follow"), context: context)
        case "show":
            return try QueueCommands.show(id: p.numbers("ID").first ?? 0, json: p.has("json"), context: context)
        case "retry":
            return try QueueCommands.retry(ids: p.numbers("ID"), allFailed: p.has("all-failed"), to: p.value("to"), now: p.has("now"), context: context)
        case "pause":
            return try PauseCommands.pause(ids: p.numbers("ID"), all: p.has("all"), context: context)
        case "resume":
            return try PauseCommands.resume(ids: p.numbers("ID"), all: p.has("all"), context: context)
        case "cancel":
            return try QueueCommands.cancel(ids: p.numbers("ID"), context: context)
        case "clear":
            guard let scope = p.text("WHICH").flatMap(QueueStore.ClearScope.init(rawValue:)) else { return ExitStatus.usage }
            return try QueueCommands.clear(scope, context: context)
        case "account add":
            return accountAdd(p, context: context)
        case "account list":
            return AccountCommands.list(json: p.has("json"), context: context)
        case "account remove":
            return AccountCommands.remove(p.text("NAME") ?? "", context: context)
        case "watch add":
            return try watchAdd(p, context: context)
        case "watch list":
            return try WatchCommands.list(json: p.has("json"), context: context)
        case "watch remove":
            return try WatchCommands.remove(p.text("ID") ?? "", context: context)
        case "watch pause", "watch resume":
            return try WatchCommands.setPaused(p.text("ID") ?? "", p.command == "watch pause", context: context)
        case "help":
            return help(p.texts("COMMAND"), context: context)
        case "run":
            return AgentCommand.run(untilIdle: p.has("until-idle"), context: context)
        case "stop":
            return ServiceCommand.stopAgent(context: context)
        case "tray":
            return TrayCommand.run(context: context)
        case "service install", "service uninstall", "service status":
            return ServiceCommand.run(String(p.command.dropFirst("service ".count)), context: context)
        default:
            context.complain("`\(p.command)` is not implemented")
            return ExitStatus.usage
        }
    }

    static func watchAdd(_ p: ParsedArguments, context: CommandContext) throws -> Int32 {
        guard let folder = p.positional("DIR").first?.path, let to = p.value("to") else { return ExitStatus.usage }
        var request = WatchCommands.AddRequest(folder: folder, remoteFolder: to)
        request.account = p.value("account")
        request.name = p.value("name")
        request.media = MediaSelection(pictures: p.has("pictures"), videos: p.has("videos"))
        request.existing = p.has("existing")
        request.subfolders = p.value("subfolders").flatMap(WatchRule.DateSubfolders.init(rawValue:)) ?? .none
        request.afterUpload = p.value("after-upload").flatMap(WatchRule.AfterUpload.init(rawValue:)) ?? .keep
        request.wifiOnly = p.has("wifi-only")
        request.onACPower = p.has("on-ac-power")
        request.settleSeconds = p.number("settle").map(Int.init) ?? WatchRule.defaultSettleSeconds
        return try WatchCommands.add(request, context: context)
    }

    /// `help [COMMAND...]`: the help of the command named, as `COMMAND --help` prints it.
    static func help(_ words: [String], context: CommandContext) -> Int32 {
        var spec = CommandSpecs.instantUpload
        var path = [spec.name]
        for word in words {
            guard let sub = spec.subcommand(named: word) else {
                var message = "unknown command `\(DisplayText.escape(word))`"
                if let near = closest(to: word, in: spec.subcommands.map(\.name)) { message += "; did you mean `\(near)`?" }
                context.complain("\(path.first ?? "instant-upload"): \(message)\nrun `\(path.joined(separator: " ")) --help` for the commands")
                return ExitStatus.usage
            }
            spec = sub
            path.append(word)
        }
        context.say(spec.helpText(commandPath: path))
        return ExitStatus.ok
    }

    static func accountAdd(_ p: ParsedArguments, context: CommandContext) -> Int32 {
        var request = AccountCommands.AddRequest(name: p.value("name"), address: p.text("URL"), webdavURL: p.value("webdav"),
                                                 tusURL: p.value("tus"), username: p.value("user"))
        request.login = p.has("login")
        request.passwordFromStdin = p.has("password-stdin")
        request.wifiOnly = p.has("wifi-only")
        request.allowInsecureHTTP = p.has("allow-insecure-http")
        // Kept absolute: the agent reads it later from another working directory.
        request.caFile = p.argument("ca-file").map { $0.path.absolute().text }
        return AccountCommands.add(request, context: context)
    }
}
