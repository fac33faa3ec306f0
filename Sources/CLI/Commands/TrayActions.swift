import Desktop
import Glibc
import Platform
import Queue
import Transport

/// What the status icon's menu does, through the same code as the commands, and the windows
/// it opens (a terminal, a file chooser, the browser) as programs of their own, so the icon
/// never waits on them.
final class TrayActions {
    let context: CommandContext
    let store: QueueStore
    /// Programs started from the menu, reaped as they end.
    private var started: [ChildProcess] = []

    init(context: CommandContext, store: QueueStore) {
        self.context = context
        self.store = store
    }

    func picture() -> TrayPicture {
        started.removeAll { !$0.isRunning }
        do {
            return TrayView.picture(try TrayView.read(store, context: context))
        } catch {
            // The queue cannot be read (a full disk, a database another program broke): say
            // so on the icon rather than showing an old picture.
            return TrayPicture(mood: .attention, title: "instant-upload", body: "cannot read the queue: \(error)",
                               menu: [.text("cannot read the queue"), .separator, TrayMenuItem("Show queue", action: .showQueue),
                                      .separator, TrayMenuItem("Quit tray", action: .quit)])
        }
    }

    /// Carries out one menu choice; false for "Quit tray".
    func perform(_ action: TrayAction) -> Bool {
        Log.debug("status icon: menu choice \(action)")
        do {
            switch action {
            case .quit:
                return false
            case .pauseAll:
                _ = try PauseCommands.pause(ids: [], all: true, context: context)
            case .resumeAll:
                _ = try PauseCommands.resume(ids: [], all: true, context: context)
            case .retryFailed:
                _ = try QueueCommands.retry(ids: [], allFailed: true, to: nil, now: false, context: context)
            case .pauseRule(let id):
                _ = try WatchCommands.setPaused(id, true, context: context)
            case .resumeRule(let id):
                _ = try WatchCommands.setPaused(id, false, context: context)
            case .showQueue:
                showQueue()
            case .sendFiles:
                sendFiles()
            case .openUploaded(let account, let remotePath):
                openUploaded(account: account, remotePath: remotePath)
            }
        } catch {
            context.complain("\(error)")
        }
        return true
    }

    // MARK: Windows of their own

    /// `instant-upload queue --follow` in the desktop's terminal.
    func showQueue() {
        guard let me = AgentLauncher.agentExecutable() else { return context.complain("cannot find the instant-upload program") }
        let command = [me, "queue", "--follow"]
        // The freedesktop launcher first, then Debian's alternative, then terminals by name.
        let terminals: [(String, [String])] = [("xdg-terminal-exec", []), ("x-terminal-emulator", ["-e"]), ("gnome-terminal", ["--"]),
                                               ("konsole", ["-e"]), ("xfce4-terminal", ["-x"]), ("mate-terminal", ["-x"]),
                                               ("lxterminal", ["-e"]), ("xterm", ["-e"])]
        for (name, prefix) in terminals {
            guard let path = ChildProcess.find(name) else { continue }
            return launch(path, prefix + command)
        }
        context.complain("no terminal program found (x-terminal-emulator, gnome-terminal, konsole, xterm...): run `instant-upload queue --follow` in one")
    }

    /// A file chooser, then `share-to` with what was chosen (its folder picker asks where).
    func sendFiles() {
        guard let shareTo = Self.shareToProgram() else {
            return context.complain("cannot find the share-to program beside instant-upload or on the PATH")
        }
        let desktop = ProcessEnvironment.current["XDG_CURRENT_DESKTOP"] ?? ""
        let chooser: String
        if desktop.contains("KDE"), ChildProcess.find("kdialog") != nil {
            chooser = "kdialog --title 'Send files to your server' --getopenfilename \"$HOME\" --multiple --separate-output"
        } else if ChildProcess.find("zenity") != nil {
            chooser = "zenity --file-selection --multiple --title='Send files to your server' --separator=\"$nl\""
        } else {
            return context.complain("no file chooser found (zenity or kdialog): send files with `share-to FILE...` or from the file manager")
        }
        // One name per line; a name with a newline in it is sent from the file manager instead.
        // The chooser's own chatter (GTK's warnings) stays out of the log; share-to's does not.
        let script = "nl='\n'; files=$(\(chooser) 2>/dev/null) || exit 0; [ -n \"$files\" ] || exit 0; set -f; IFS=$nl; exec \"$0\" -- $files"
        launch("/bin/sh", ["-c", script, shareTo])
    }

    /// `share-to`: beside the program as it was started (a link to it, installed beside it),
    /// else beside the file that program is, else on the PATH.
    static func shareToProgram() -> String? {
        var candidates: [String] = []
        if let started = CommandLine.arguments.first, started.contains("/") { candidates.append(LocalPath(started).parent.text + "/share-to") }
        if let me = AgentLauncher.agentExecutable() { candidates.append(LocalPath(me).parent.text + "/share-to") }
        return candidates.first { access($0, X_OK) == 0 } ?? ChildProcess.find("share-to")
    }

    /// The folder of an uploaded file in the server's web interface where it has one
    /// (Nextcloud, ownCloud 10), else its remote path on the clipboard.
    func openUploaded(account name: String, remotePath: String) {
        let account = try? store.account(named: name)
        let folder = "/" + WebDAVPath.components(remotePath).dropLast().joined(separator: "/")
        if let account, let base = account.server.baseURL, account.server.kind == .nextcloud
            || (account.server.kind == .owncloud && account.server.product != "Infinite Scale"),
           let open = ChildProcess.find("xdg-open") {
            return launch(open, [base + "/index.php/apps/files/?dir=" + PercentEncoding.encode(folder.utf8, keepingSlashes: true)])
        }
        let tools: [(String, [String])] = ProcessEnvironment.current["WAYLAND_DISPLAY"] != nil
            ? [("wl-copy", []), ("xclip", ["-selection", "clipboard"]), ("xsel", ["--clipboard", "--input"])]
            : [("xclip", ["-selection", "clipboard"]), ("xsel", ["--clipboard", "--input"]), ("wl-copy", [])]
        for (tool, arguments) in tools {
            guard let path = ChildProcess.find(tool) else { continue }
            launch("/bin/sh", ["-c", "p=$1; shift; printf '%s' \"$p\" | exec \"$0\" \"$@\"", path, remotePath] + arguments)
            context.say("copied \(DisplayText.escape(remotePath)) to the clipboard")
            return
        }
        context.say("\(DisplayText.escape(remotePath)) on \(name) (no clipboard program: xclip, xsel or wl-copy)")
    }

    private func launch(_ executable: String, _ arguments: [String]) {
        do {
            // Their complaints (share-to's, a terminal's) go where the tray's own log goes.
            started.append(try ChildProcess(executable, arguments, error: .inherit, newSession: true))
        } catch {
            context.complain("cannot start \(executable): \(error)")
        }
    }
}
