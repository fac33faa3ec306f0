import Queue

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
        subcommands: [upload, queue, status, show, retry, pause, resume, cancel, clear, account, download, run, service, help, version])

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

    /// `download [--account A] REMOTE_PATH...`
    public static let download = CommandSpec(
        name: "download",
        summary: "Queue files on your server to download into Local Drive in your downloads folder.",
        options: [.option("account", short: "a", value: "A", help: "the account to use (default: the only one)")],
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

    /// `account add --webdav URL --tus URL --user NAME ...` or `account add URL --user NAME`
    public static let accountAdd = CommandSpec(
        name: "add",
        summary: "Add an account, or change the address or password of one.",
        usage: ["--webdav URL --tus URL --user NAME [--name ALIAS] [--password-stdin] [--wifi-only] [--ca-file PATH] [--allow-insecure-http]",
                "URL --user NAME [--name ALIAS] [--password-stdin] [--wifi-only] [--ca-file PATH] [--allow-insecure-http]"],
        discussion: "With one URL, the WebDAV and tus addresses are derived from it (URL/dav/NAME/ and URL/files/). Both are checked with the password before anything is saved. The password is asked for on the terminal, or read from standard input with --password-stdin; it is kept in the Secret Service (or a file only you can read), never in the config file.",
        options: [
            .option("webdav", value: "URL", help: "the WebDAV address, for listing and creating folders"),
            .option("tus", value: "URL", help: "the tus address, for uploads"),
            .option("user", short: "u", value: "NAME", help: "the user name on the server", required: true),
            .option("name", value: "ALIAS", help: "what to call the account here (default: NAME@host)"),
            .flag("password-stdin", help: "read the password from standard input"),
            .flag("wifi-only", help: "auto-uploads to this account wait for an unmetered Wi-Fi network"),
            .option("ca-file", value: "PATH", help: "trust the certificate authority in this PEM file for this server (a private CA)"),
            .flag("allow-insecure-http", help: "accept http:// to another machine, though the password then crosses the network in clear text"),
        ],
        positionals: [.optional("URL", help: "the server's address, instead of --webdav and --tus")],
        rules: [.oneOf([["URL"], ["--webdav", "--tus"]])])

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
        options: [.flag("until-idle", help: "exit once nothing is queued, moving or waiting to retry (for scripts)")])

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
