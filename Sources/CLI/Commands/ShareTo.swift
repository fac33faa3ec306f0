import Desktop
import Engine
import Platform
import Queue

/// `share-to [--account A] [--to DIR] FILE_OR_URI...`: the desktop "Send to" handler.
///
/// Takes what file managers pass (paths or `file://` URIs), checks the files (walking into
/// folders) before asking anything, asks for the folder when `--to` is not given, queues
/// everything in one transaction, says so in a notification, and wakes or starts the agent
/// without waiting for it. The agent does the rest; closing the file manager changes nothing.
enum ShareTo {
    static func run(_ p: ParsedArguments, context: CommandContext) throws -> Int32 {
        if let folder = p.value("to"), let problem = RemoteFolderName.problem(folder) {
            context.complain(problem)
            return ExitStatus.usage
        }
        var paths: [LocalPath] = []
        var problems: [String] = []
        for argument in p.positional("FILE_OR_URI") {
            do { paths.append(try FileURI.localPath(forArgument: argument.bytes)) } catch { problems.append(error.description) }
        }
        let selection = Intake.select(paths)
        problems += selection.refused.map(\.description)
        for problem in problems { context.complain("not queued: \(problem)") }
        guard !selection.files.isEmpty else {
            context.complain("nothing to send")
            notify(DesktopNotification(summary: "Nothing was sent", body: problems.prefix(3).joined(separator: "\n"),
                                       urgency: .normal, icon: "dialog-warning", category: "transfer.error"), context: context)
            return ExitStatus.attention
        }

        let configuration = try context.configuration()
        let store = try context.openStore()
        let account: Account
        let folder: String
        if let given = p.value("to") {
            let (chosen, refusal) = try TransferCommands.account(p.value("account"), store: store, context: context)
            guard let chosen else { return refusal }
            (account, folder) = (chosen, given)
        } else {
            switch try ask(selection, accountName: p.value("account"), caFile: configuration.caFile, store: store, context: context) {
            case .chosen(let chosen, let chosenFolder): (account, folder) = (chosen, chosenFolder)
            case .cancelled: return ExitStatus.attention
            case .impossible(let status): return status
            }
        }

        let result = try Intake.enqueue(selection, into: folder, account: account, origin: .share, store: store)
        do { try RecentTargets(store: store).record(folder, for: account) } catch {
            Log.warning("could not remember \(folder) as a recent folder: \(error)")
        }
        let normalized = RemotePath.normalize(folder)
        context.say("queued \(result.ids.count) file\(result.ids.count == 1 ? "" : "s") for \(account.name):\(normalized)")
        if let batch = QueuedBatch(fileNames: selection.files.map { $0.path.lastComponent.text }, folder: normalized, account: account.name) {
            var notification = batch.notification
            if !problems.isEmpty { notification.body = "Not sent: " + problems.prefix(3).joined(separator: "\n") }
            notify(notification, context: context)
        }
        context.wakeOrStartAgent(waitUntilReady: false)
        return problems.isEmpty ? ExitStatus.ok : ExitStatus.attention
    }

    enum Answer {
        case chosen(Account, String)
        case cancelled
        case impossible(Int32)
    }

    /// Shows the folder picker: on a display, or on the terminal.
    static func ask(_ selection: Intake.Selection, accountName: String?, caFile: String?, store: QueueStore,
                    context: CommandContext) throws -> Answer {
        var accounts = try store.accounts()
        if let accountName {
            accounts = accounts.filter { $0.name == accountName }
            if accounts.isEmpty {
                context.complain("there is no account named \(DisplayText.escape(accountName)); `instant-upload account list` shows them")
                return .impossible(ExitStatus.attention)
            }
        }
        if accounts.isEmpty {
            context.complain("no account yet: add one with `instant-upload account add --webdav URL --tus URL --user NAME`")
            return .impossible(ExitStatus.attention)
        }
        let dialog: any PickerDialog
        switch PickerBackend.dialog(environment: context.paths.environment) {
        case .success(let found): dialog = found
        case .failure(let unavailable):
            context.complain(unavailable.description)
            return .impossible(ExitStatus.usage)
        }
        let secrets = SecretStore(paths: context.paths)
        let recent = RecentTargets(store: store)
        let choices = accounts.map { account in
            PickerAccount(name: account.name, recent: recent.folders(for: account),
                          folders: WebDAVFolders(account: account, caFile: caFile) { secrets.password(for: account.name) })
        }
        let count = selection.files.count
        let what = count == 1 ? DisplayText.escape(selection.files[0].path.lastComponent.bytes) : "\(count) files"
        do {
            guard let picked = try FolderPicker(dialog: dialog, accounts: choices, what: what).run(),
                  let account = accounts.first(where: { $0.name == picked.account }) else { return .cancelled }
            return .chosen(account, picked.folder)
        } catch {
            context.complain("\(error); give the folder with --to DIR instead")
            return .impossible(ExitStatus.environment)
        }
    }

    /// Shows a notification when the session has a notification service; quickly either way.
    static func notify(_ notification: DesktopNotification, context: CommandContext) {
        Notifier(environment: context.paths.environment, callTimeoutMilliseconds: 800)?.notify(notification)
    }
}
