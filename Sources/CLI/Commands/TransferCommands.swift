import Engine
import Platform
import Queue
import Transport
import Desktop

/// The front doors that add work: `upload`, `share-to` and `download`.
public enum TransferCommands {
    /// The account named, or the only one there is. Otherwise it says why not and gives the
    /// exit status: an unknown `--account`, or several accounts and none chosen, is a command
    /// line to correct (2); no account at all is set-up the person still has to do (1).
    static func account(_ name: String?, store: QueueStore, context: CommandContext) throws -> (Account?, Int32) {
        let accounts = try store.accounts()
        func refuse(_ message: String, _ status: Int32) -> (Account?, Int32) {
            context.complain(message)
            return (nil, status)
        }
        if let name {
            if let match = accounts.first(where: { $0.name == name }) { return (match, ExitStatus.ok) }
            let near = closest(to: name, in: accounts.map(\.name))
            return refuse("there is no account named \(DisplayText.escape(name)); "
                          + (near.map { "did you mean \(DisplayText.escape($0))?" } ?? "`instant-upload account list` shows them"),
                          ExitStatus.usage)
        }
        switch accounts.count {
        case 0:
            return refuse("no account yet: add one with `instant-upload account add --webdav URL --tus URL --user NAME`",
                          ExitStatus.attention)
        case 1:
            return (accounts[0], ExitStatus.ok)
        default:
            let names = accounts.map { DisplayText.escape($0.name) }.joined(separator: ", ")
            return refuse("there are \(accounts.count) accounts (\(names)): choose one with --account", ExitStatus.usage)
        }
    }

    /// Queues local files for upload; bad ones are named, good ones still go.
    public static func upload(files: [LocalPath], to folder: String, accountName: String?, now: Bool, origin: Origin,
                              context: CommandContext) throws -> Int32 {
        if let problem = RemoteFolderName.problem(folder) {
            context.complain(problem)
            return ExitStatus.usage
        }
        _ = try context.configuration()
        let store = try context.openStore()
        let (chosen, refusal) = try account(accountName, store: store, context: context)
        guard let account = chosen else { return refusal }
        // Checked now, not when the agent meets it: a CA file that cannot be used.
        try CAFile.check(account)
        let result = try Intake.enqueueUploads(files, into: folder, account: account, origin: origin, ignoreRules: now, store: store)
        for refusal in result.refused { context.complain("not queued: \(refusal)") }
        for renamed in result.renamed { context.complain("note: \(renamed), which takes only UTF-8 names") }
        if !result.ids.isEmpty {
            let target = "\(account.name):\(RemotePath.normalize(folder))"
            context.say("queued \(result.ids.count) file\(result.ids.count == 1 ? "" : "s") for \(target)" + idList(result.ids))
            context.wakeOrStartAgent()
        }
        return result.refused.isEmpty ? ExitStatus.ok : ExitStatus.attention
    }

    /// Queues remote files for download after asking the server what they are: folders are
    /// refused before anything is written.
    /// `track` says whether edits of the files go back to the server; nil as the config says.
    public static func download(paths: [String], accountName: String?, track: Bool?, context: CommandContext) throws -> Int32 {
        let tracksEdits = try track ?? context.configuration().trackEdits
        let store = try context.openStore()
        let (chosen, refusal) = try account(accountName, store: store, context: context)
        guard let account = chosen else { return refusal }
        let settings = try context.transferSettings(for: account)
        // Never asked without the password: say why it cannot be read instead.
        let credentials: Credentials
        switch SecretStore(paths: context.paths).lookup(account: account.name) {
        case .found(let password):
            credentials = Credentials(username: account.username, password: password)
        case .notStored:
            context.complain("no password is stored for the account \(DisplayText.escape(account.name)): add it again with `instant-upload account add`")
            return ExitStatus.attention
        case .unavailable(let why):
            context.complain("the password of \(DisplayText.escape(account.name)) cannot be read now (\(why)): unlock your keyring, then try again")
            return ExitStatus.environment
        }
        let dav = WebDAVClient(root: account.webdavURL, credentials: credentials)
        settings.prepare(dav.session, for: account)
        var items: [NewTransfer] = []
        var status = ExitStatus.ok
        for raw in paths {
            let path = RemotePath.normalize(raw)
            if RemotePath.escapesRoot(raw) {
                context.complain("not queued: \(DisplayText.escape(raw)) has `..` in it, which is not taken; give its path from the top without it")
                status = ExitStatus.attention
                continue
            }
            do {
                let item = try dav.properties(of: path)
                if item.isFolder {
                    context.complain("not queued: \(DisplayText.escape(path)) is a folder; folders can't be downloaded as one file: download the files inside it")
                    status = ExitStatus.attention
                    continue
                }
                items.append(NewTransfer(direction: .download, origin: .manual, accountID: account.id, localPath: LocalPath(bytes: []),
                                         remotePath: path, bytesTotal: item.size ?? 0, tracksEdits: tracksEdits))
            } catch let e as HTTPStatusError where e.status == 404 {
                context.complain("not queued: \(DisplayText.escape(path)) does not exist on \(account.name)")
                status = ExitStatus.attention
            } catch {
                context.complain("not queued: \(DisplayText.escape(path)): \(FailureWords.of(error, user: account.username).line)")
                status = max(status, ExitStatus.of(serverError: error))
            }
        }
        let ids = try store.enqueue(items)
        if !ids.isEmpty {
            context.say("queued \(ids.count) download\(ids.count == 1 ? "" : "s") into \(context.paths.localDrive)" + idList(ids))
            context.wakeOrStartAgent()
        }
        return status
    }

    /// ` (#4, #5)` for a few IDs, ` (#4 to #300)` for a run of many, so the next command can name them.
    static func idList(_ ids: [Int64]) -> String {
        guard let first = ids.first, let last = ids.last else { return "" }
        if ids.count <= 5 { return " (" + ids.map { "#\($0)" }.joined(separator: ", ") + ")" }
        if last - first + 1 == Int64(ids.count) { return " (#\(first) to #\(last))" }
        return " (#\(first), #\(ids[1]), … #\(last))"
    }
}
