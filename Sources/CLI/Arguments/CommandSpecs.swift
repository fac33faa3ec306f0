import Queue
import Watcher

/// The whole command-line surface of `instant-upload` and `share-to`, in one place.
///
/// The parser checks arguments against these specs and `--help` prints from them; a
/// command's implementation reads options and positionals by the names used here.
public enum CommandSpecs {
    /// `instant-upload COMMAND ...`
    public static let instantUpload = CommandSpec(
        name: "instant-upload",
        summary: "Moves your files to your own server, and never goes quiet about it.",
        discussion: "Everything you queue is written to disk before any transfer starts; `instant-upload queue` shows exactly what the agent works from, and why anything that is not moving is waiting.",
        options: [.version],
        subcommands: [upload, queue, status, show, retry, pause, resume, cancel, clear, account, watch, download, run, stop, tray, service, help, version])

    /// `share-to [--account A] [--to REMOTE_DIR] FILE_OR_URI...`: the desktop "Send to" handler.
    public static let shareTo = CommandSpec(
        name: "share-to",
        summary: "Send files to your server from the file manager: asks for a folder, queues them, and returns.",
        discussion: "Takes paths or file:// URIs, as file managers pass them; a folder is sent with everything in it. Without --to, a folder picker asks: a window when there is a display (zenity, or kdialog on KDE), else questions on the terminal. Cancelling sends nothing and exits 1.",
        options: [
            .option("account", short: "a", value: "A", help: "the account to use (default: the only one, or the picker asks)"),
            .option("to", short: "t", value: "REMOTE_DIR", kind: .remoteFolder, help: "the folder on the server; without it a folder picker asks"),
            .version,
        ],
        positionals: [.oneOrMore("FILE_OR_URI", help: "a file or folder, as a path or a file:// URI")])

    // MARK: Transfers

    /// `upload [--account A] --to REMOTE_DIR [--now] FILE...`
    public static let upload = CommandSpec(
        name: "upload",
        summary: "Queue files to upload into a folder on your server.",
        options: [
            .option("account", short: "a", value: "A", help: "the account to use (default: the only one)"),
            .option("to", short: "t", value: "REMOTE_DIR", kind: .remoteFolder, help: "the folder on the server, e.g. /Photos", required: true),
            .flag("now", help: "send even where a rule would hold it back (Wi-Fi only)"),
        ],
        positionals: [.oneOrMore("FILE", help: "a file to upload; use `--` before names that start with `-`")])

    /// `download [--account A] [--no-track] REMOTE_PATH...`
    public static let download = CommandSpec(
        name: "download",
        summary: "Queue files on your server to download into Local Drive in your downloads folder.",
        discussion: "A downloaded file that another program edits goes back as the new version of the server's file, once it has been still for a few seconds; if the server's copy changed meanwhile, the edit goes beside it as a conflicted copy and the server's copy is left alone. Files you make in Local Drive are never uploaded, and a file deleted there is not deleted on the server.",
        options: [.option("account", short: "a", value: "A", help: "the account to use (default: the only one)"),
                  .flag("no-track", help: "do not send edits of these files back (the config's `track_edits` sets the default)")],
        positionals: [.oneOrMore("REMOTE_PATH", help: "a file on the server, e.g. /Documents/report.pdf")])

    // MARK: The queue

    /// `queue [--state S] [--json] [--follow]`
    public static let queue = CommandSpec(
        name: "queue",
        summary: "Show the queue: what is moving, waiting, retrying, failed and done.",
        options: [
            .option("state", short: "s", value: "STATE", kind: .choice(TransferState.allCases.map(\.rawValue)),
                    help: "show only this group, in full"),
            .flag("json", help: "print JSON for programs"),
            .flag("follow", short: "f", help: "a live view until Ctrl-C or q; one line per change into a pipe"),
        ])

    /// `status [--json]`
    public static let status = CommandSpec(
        name: "status",
        summary: "One line on the work in flight: what moves, what waits and why, how long is left.",
        discussion: "For example: 3 uploading, 264 waiting, 2 retrying (server busy), 1 failed; 30 of 300 files, 120 MB of 193 MB, 14 MB/s, about 6 s left. It exits 1 when an item failed or work waits with no agent running.",
        options: [.flag("json", help: "print JSON for programs")])

    /// `show ID [--json]`
    public static let show = CommandSpec(
        name: "show",
        summary: "Everything about one transfer: paths, progress, reason, checksum, attempts.",
        options: [.flag("json", help: "print JSON for programs")],
        positionals: [.one("ID", kind: .number, help: "the transfer's number, as `instant-upload queue` shows it")])

    /// `retry ID... [--to DIR] [--now]` or `retry --all-failed`
    public static let retry = CommandSpec(
        name: "retry",
        summary: "Queue failed transfers again.",
        usage: ["ID... [--to DIR] [--now]", "--all-failed [--now]"],
        options: [
            .option("to", short: "t", value: "DIR", kind: .remoteFolder, help: "upload into this folder instead (when the old one is gone)"),
            .flag("now", help: "send even where a rule would hold it back (Wi-Fi only)"),
            .flag("all-failed", help: "retry every failed transfer"),
        ],
        positionals: [.zeroOrMore("ID", kind: .number, help: "a transfer's number")],
        rules: [.oneOf([["ID"], ["--all-failed"]]), .conflict("--all-failed", "--to")])

    /// `pause ID...` or `pause --all`
    public static let pause = CommandSpec(
        name: "pause",
        summary: "Hold transfers until you resume them; running ones stop at their last checkpoint.",
        usage: ["ID...", "--all"],
        discussion: "Nothing is thrown away: the server keeps what it received, a download keeps its .part file, and `instant-upload resume` goes on from there. A paused item stays paused when the agent restarts. With --all the whole queue waits, new items included, until `instant-upload resume --all`: for a moment on a metered link or during a video call.",
        options: [.flag("all", help: "pause the whole queue, new items included")],
        positionals: [.zeroOrMore("ID", kind: .number, help: "a transfer's number")],
        rules: [.oneOf([["ID"], ["--all"]])])

    /// `resume ID...` or `resume --all`
    public static let resume = CommandSpec(
        name: "resume",
        summary: "Let paused transfers go on from where they stopped.",
        usage: ["ID...", "--all"],
        options: [.flag("all", help: "lift the pause of the whole queue and of every paused transfer")],
        positionals: [.zeroOrMore("ID", kind: .number, help: "a transfer's number")],
        rules: [.oneOf([["ID"], ["--all"]])])

    /// `cancel ID...`
    public static let cancel = CommandSpec(
        name: "cancel",
        summary: "Stop transfers and take them out of the queue.",
        positionals: [.oneOrMore("ID", kind: .number, help: "a transfer's number")])

    /// `clear completed|failed|all`
    public static let clear = CommandSpec(
        name: "clear",
        summary: "Remove finished transfers from the list.",
        positionals: [.one("WHICH", kind: .choice(["completed", "failed", "all"]),
                           help: "completed, failed (discarding them), or all finished ones")])

    // MARK: Accounts

    /// `account add|list|remove`
    public static let account = CommandSpec(
        name: "account",
        summary: "Add, list and remove server accounts.",
        subcommands: [accountAdd, accountList, accountRemove])

    /// `account add URL [--user NAME | --login]` or `account add --webdav URL --tus URL --user NAME`
    public static let accountAdd = CommandSpec(
        name: "add",
        summary: "Add an account, or change the address or password of one.",
        usage: ["URL [--user NAME [--password-stdin] | --login] [--name ALIAS] [--wifi-only] [--ca-file PATH] [--allow-insecure-http]",
                "--webdav URL --tus URL --user NAME [--name ALIAS] [--password-stdin] [--wifi-only] [--ca-file PATH] [--allow-insecure-http]"],
        discussion: "Give the address you open in the browser: the server is asked what it is (Nextcloud, ownCloud, ownCloud Infinite Scale, or a plain WebDAV server, with tus beside it at /files/ or not) and uploads go by the best way it offers: tus, Nextcloud's chunked upload, or one PUT per file. Without --user (or with --login), a Nextcloud server is logged in to in the browser, as its desktop client does, and only the app password it gives is kept. With --user, the password is asked for on the terminal, or read from standard input with --password-stdin. --webdav and --tus name both addresses instead. Everything is checked with the server before anything is saved; passwords are kept in the Secret Service (or a file only you can read), never in the config file.",
        options: [
            .option("webdav", value: "URL", help: "the WebDAV address, for listing and creating folders (with --tus)"),
            .option("tus", value: "URL", help: "the tus address, for uploads (with --webdav)"),
            .option("user", short: "u", value: "NAME", help: "the user name on the server (without it, a Nextcloud is logged in to in the browser)"),
            .flag("login", help: "log in in the browser (Nextcloud's Login Flow), even with --user"),
            .option("name", value: "ALIAS", help: "what to call the account here (default: NAME@host)"),
            .flag("password-stdin", help: "read the password from standard input"),
            .flag("wifi-only", help: "auto-uploads to this account wait for an unmetered Wi-Fi network"),
            .option("ca-file", value: "PATH", help: "trust the certificate authority in this PEM file for this server (a private CA)"),
            .flag("allow-insecure-http", help: "accept http:// to another machine, though the password then crosses the network in clear text"),
        ],
        positionals: [.optional("URL", help: "the server's address, as you open it in the browser")],
        rules: [.oneOf([["URL"], ["--webdav", "--tus"]]), .conflict("--login", "--password-stdin"), .conflict("--login", "--webdav")])

    /// `account list [--json]`
    public static let accountList = CommandSpec(
        name: "list",
        summary: "List the accounts.",
        options: [.flag("json", help: "print JSON for programs")])

    /// `account remove NAME`
    public static let accountRemove = CommandSpec(
        name: "remove",
        summary: "Remove an account, its password and its queued transfers.",
        positionals: [.one("NAME", help: "the account's name, as `instant-upload account list` shows it")])

    // MARK: Instant upload

    /// `watch add|list|remove|pause|resume`
    public static let watch = CommandSpec(
        name: "watch",
        summary: "Upload new photos and videos from a folder by themselves (instant upload).",
        subcommands: [watchAdd, watchList, watchRemove, watchPause, watchResume])

    /// `watch add DIR --to REMOTE_DIR [--account A] [--pictures] [--videos] ...`
    public static let watchAdd = CommandSpec(
        name: "add",
        summary: "Watch a folder: new pictures and videos in it (and below it) are uploaded by themselves.",
        discussion: "Files already in the folder are left alone unless you pass --existing. A file is taken once it has been written completely and has not changed for a few seconds; each file is sent once, also after a restart, a rename or a copy within the folder. Neither --pictures nor --videos means both.",
        options: [
            .option("to", short: "t", value: "REMOTE_DIR", kind: .remoteFolder, help: "the folder on the server, e.g. /Photos/Camera", required: true),
            .option("account", short: "a", value: "A", help: "the account to use (default: the only one)"),
            .option("name", value: "ID", help: "the rule's name (default: from the folder's name, e.g. camera)"),
            .flag("pictures", help: "upload pictures (JPEG, HEIC, PNG, WebP, GIF, camera RAW)"),
            .flag("videos", help: "upload videos (MP4, MOV, 3GP, MKV, WebM, AVI)"),
            .flag("existing", help: "also upload what the folder holds now"),
            .option("subfolders", value: "WHEN", kind: .choice(WatchRule.DateSubfolders.allCases.map(\.rawValue)),
                    help: "date folders by the capture date, e.g. month: /Photos/2024/03/ (default: none)"),
            .option("after-upload", value: "WHAT", kind: .choice(WatchRule.AfterUpload.allCases.map(\.rawValue)),
                    help: "trash: move the original to the trash once its upload is complete (default: keep)"),
            .flag("wifi-only", help: "upload only over unmetered Wi-Fi (default: as the account says)"),
            .flag("on-ac-power", help: "upload only while the computer is plugged in"),
            .option("settle", value: "SECONDS", kind: .number,
                    help: "how long a new file must stay unchanged before it is taken (default 3)"),
        ],
        positionals: [.one("DIR", help: "the folder to watch, e.g. ~/Pictures/Camera")])

    /// `watch list [--json]`
    public static let watchList = CommandSpec(
        name: "list",
        summary: "List the watched folders: what each does, how it stands, and any trouble.",
        options: [.flag("json", help: "print JSON for programs")])

    /// `watch remove ID`
    public static let watchRemove = CommandSpec(
        name: "remove",
        summary: "Stop watching a folder and forget what it took (queued uploads stay).",
        positionals: [.one("ID", help: "the rule's name, as `instant-upload watch list` shows it")])

    /// `watch pause ID`
    public static let watchPause = CommandSpec(
        name: "pause",
        summary: "Stop watching a folder for now; its queued uploads wait too.",
        positionals: [.one("ID", help: "the rule's name, as `instant-upload watch list` shows it")])

    /// `watch resume ID`
    public static let watchResume = CommandSpec(
        name: "resume",
        summary: "Watch a paused folder again; what arrived meanwhile is uploaded.",
        positionals: [.one("ID", help: "the rule's name, as `instant-upload watch list` shows it")])

    // MARK: About the program

    /// `help [COMMAND...]`
    public static let help = CommandSpec(
        name: "help",
        summary: "Show the help of a command, e.g. `help account add`.",
        positionals: [.zeroOrMore("COMMAND", help: "the command, with its subcommand if it has one")])

    /// `version`
    public static let version = CommandSpec(name: "version", summary: "Print the version.")


    // MARK: The agent

    /// `run`: the agent itself.
    public static let run = CommandSpec(
        name: "run",
        summary: "Run the agent in the foreground (what the service starts).",
        options: [.flag("until-idle", help: "exit once nothing is queued, moving or waiting to retry, and no new file or edit is settling in a watched folder (for scripts)")])

    /// `stop`: the running agent, whoever started it.
    public static let stop = CommandSpec(
        name: "stop",
        summary: "Stop the running agent: transfers end at their last checkpoint and go on when it starts again.")

    /// `tray`: the status icon, started with the desktop session.
    public static let tray = CommandSpec(
        name: "tray",
        summary: "Show the status icon in the desktop's panel: what moves and what waits, pause, retry, send files.",
        discussion: "The desktop starts it at login (the autostart entry `make install` and the package install); `tray = false` in the config's [agent] section turns it off. It shows in panels that host StatusNotifierItems (KDE Plasma, Xfce, Cinnamon, MATE, LXQt; GNOME with the AppIndicator extension) and waits quietly for one when none runs. Without a session bus it exits 0 at once; either way its log says why.")

    /// `service install|uninstall|status`
    public static let service = CommandSpec(
        name: "service",
        summary: "Install, remove or check the systemd user service that runs the agent.",
        subcommands: [
            CommandSpec(name: "install", summary: "Install and start the user service; it starts again at login."),
            CommandSpec(name: "uninstall", summary: "Stop and remove the user service; queued work stays queued."),
            CommandSpec(name: "status", summary: "Say whether the service is installed and running."),
        ])
}
